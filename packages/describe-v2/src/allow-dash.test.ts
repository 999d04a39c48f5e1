/**
 * The operator's allowDash override (decision 0099) on a parsed tool: which arguments it reaches,
 * that a call then passes a leading `-` through, and the warnings for names that reach nothing.
 */
import { describe, expect, it } from 'vitest'
import { arg, TOOL, v1, v2 } from '../test/documents.js'
import { allowDashFor } from './allow-dash.js'
import { ArgumentError } from './errors.js'
import { parseDescribe } from './parse.js'
import { renderCall } from './render.js'
import type { ToolSpec } from './types.js'

function load(document: unknown): ToolSpec {
  return parseDescribe(JSON.stringify(document), TOOL)
}

// As agents-exe's write-file.sh: every argument positional, the content among them.
const writer = load(
  v1({
    args: [
      arg({ name: 'filepath', mode: 'positional' }),
      arg({ name: 'content', mode: 'positional' }),
      arg({ name: 'lines', mode: 'positional', backing_type: 'integer' }),
      arg({ name: 'label', mode: 'dashdashequal' }),
      arg({ name: 'body', mode: 'stdin' }),
    ],
  }),
)
const values = { filepath: 'notes.md', content: '- item', lines: 2, label: 'x', body: 'b' }

describe('allowDashFor', () => {
  it('lets the named argument take a leading "-" and leaves the others refused', () => {
    const { spec, allowed, warnings } = allowDashFor(writer, ['content'])
    expect(allowed).toEqual(['content'])
    expect(warnings).toEqual([])
    expect(renderCall(spec.args, values).argv).toEqual(['run', 'notes.md', '- item', '2', '--label=x'])
    expect(() => renderCall(spec.args, { ...values, filepath: '-rf' })).toThrow(ArgumentError)
    // The tool as parsed is left as it was.
    expect(() => renderCall(writer.args, values)).toThrow(/"content": "- item" starts with "-"/)
  })

  it('true reaches every positional and dashdashspace argument the refusal applies to', () => {
    const { spec, allowed } = allowDashFor(writer, true)
    expect(allowed).toEqual(['filepath', 'content'])
    expect(renderCall(spec.args, { ...values, filepath: '--x' }).argv[1]).toBe('--x')
  })

  it("reaches a sub-command's argument by its name, listed as command.name", () => {
    const tool = load(
      v2({
        args: [],
        commands: [
          { name: 'put', description: 'd', args: [arg({ name: 'content', mode: 'positional' })] },
          { name: 'get', description: 'd', args: [arg({ name: 'key', mode: 'positional' })] },
        ],
      }),
    )
    const { spec, allowed } = allowDashFor(tool, ['content'])
    expect(allowed).toEqual(['put.content'])
    expect(spec.commands[0]?.args[0]?.allowDash).toBe(true)
    expect(spec.commands[1]?.args[0]).not.toHaveProperty('allowDash')
  })

  it('does not count an argument that declares allow_dash itself as changed', () => {
    const tool = load(v2({ args: [arg({ name: 'diff', mode: 'positional', allow_dash: true })] }))
    expect(allowDashFor(tool, ['diff'])).toMatchObject({ allowed: [], warnings: [] })
  })

  it('warns for a name the tool does not declare, listing the ones it does', () => {
    expect(allowDashFor(writer, ['contnet']).warnings).toEqual([
      'allowDash names "contnet", which reader does not declare (its arguments are filepath, content, lines, label, body)',
    ])
  })

  it('warns for a name whose values never reach argv as a word of their own', () => {
    const { warnings, allowed } = allowDashFor(writer, ['label', 'body', 'lines'])
    expect(allowed).toEqual([])
    expect(warnings).toEqual([
      'allowDash names "label", a dashdashequal string argument, which the refusal never applies to (only a non-numeric value that is a word of its own in argv is refused), so nothing changes',
      'allowDash names "body", a stdin string argument, which the refusal never applies to (only a non-numeric value that is a word of its own in argv is refused), so nothing changes',
      'allowDash names "lines", a positional integer argument, which the refusal never applies to (only a non-numeric value that is a word of its own in argv is refused), so nothing changes',
    ])
  })
})
