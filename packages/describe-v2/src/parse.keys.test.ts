/**
 * Keys of a describe document beyond the required shape: likely typos of spec keys (load
 * warnings with a "did you mean"), protocol 2 fields in a v1 document, and `allow_dash`.
 */
import { describe, expect, it } from 'vitest'
import { arg, richV2, TOOL, thrownBy, v1, v2, withProcess, withRuntime } from '../test/documents.js'
import { DescribeErrorCodes, LoadingError } from './errors.js'
import { parseDescribe } from './parse.js'
import type { ToolSpec } from './types.js'

function load(document: unknown): ToolSpec {
  return parseDescribe(JSON.stringify(document), TOOL)
}

const typo = (path: string, meant: string) => `${path}: unknown key, ignored; did you mean "${meant}"?`
const v2Only = (path: string) =>
  `${path}: ignored: it is a protocol 2 field and the document does not say "protocol": 2`

describe('likely typos of spec keys', () => {
  it('warns about a misspelt process: the stream tool would otherwise load as a oneshot without a word', () => {
    const spec = load(v2({ proccess: { mode: 'stream' } }))
    expect(spec.process.mode).toBe('oneshot')
    expect(spec.warnings).toEqual([typo('$.proccess', 'process')])
  })

  it.each<[string, Record<string, unknown>, string]>([
    ['runtime', v2({ runtim: {} }), typo('$.runtim', 'runtime')],
    [
      'empty-result (an _ for a -)',
      v2({ empty_result: { tag: 'DoNothing' } }),
      typo('$.empty_result', 'empty-result'),
    ],
    ['process.mode', withProcess({ moed: 'stream' }), typo('$.process.moed', 'mode')],
    [
      'process.output',
      withProcess({ output: { framng: 'lines' } }),
      typo('$.process.output.framng', 'framing'),
    ],
    ['process.input', withProcess({ input: { evnt: {} } }), typo('$.process.input.evnt', 'event')],
    [
      'process.ready',
      withProcess({ ready: { kind: 'exit', mtch: 'x' } }),
      typo('$.process.ready.mtch', 'match'),
    ],
    [
      'runtime.on_exit (a - for an _)',
      withRuntime({ 'on-exit': 'restart' }),
      typo('$.runtime.on-exit', 'on_exit'),
    ],
    ['runtime.sandbox', withRuntime({ sandbox: { nett: 'none' } }), typo('$.runtime.sandbox.nett', 'net')],
    [
      'runtime.sandbox.fs',
      withRuntime({ sandbox: { fs: { writ: [] } } }),
      typo('$.runtime.sandbox.fs.writ', 'write'),
    ],
    ['runtime.timeout', withRuntime({ timeout: { stpo: 1 } }), typo('$.runtime.timeout.stpo', 'stop')],
    [
      'runtime.run_as, quoted in the path',
      withRuntime({ 'run as': {} }),
      typo('$.runtime["run as"]', 'run_as'),
    ],
    [
      'an argument',
      v2({ args: [arg({ 'backing-type': 'integer' })] }),
      typo('$.args[0].backing-type', 'backing_type'),
    ],
    [
      'a command',
      v2({ commands: [{ name: 'go', description: 'd', args: [], descripton: 'x' }] }),
      typo('$.commands[0].descripton', 'description'),
    ],
    [
      "a command's argument",
      v2({ commands: [{ name: 'go', description: 'd', args: [arg({ Mode: 'x' })] }] }),
      typo('$.commands[0].args[0].Mode', 'mode'),
    ],
  ])('warns about a typo in %s', (_, document, warning) => {
    expect(load(document).warnings).toEqual([warning])
  })

  it('warns about a process or runtime key written at the top: a stream tool must not load as a oneshot unsaid', () => {
    const spec = load(
      v2({ mode: 'stream', output: { framing: 'lines' }, timeout: { stop: 1 }, 'on-exit': 'fail' }),
    )
    expect(spec.process.mode).toBe('oneshot')
    expect(spec.warnings).toEqual([
      typo('$.mode', 'process.mode'),
      typo('$.output', 'process.output'),
      typo('$.timeout', 'runtime.timeout'),
      typo('$.on-exit', 'runtime.on_exit'),
    ])
    expect(load(v1({ mode: 'stream' })).warnings).toEqual([typo('$.mode', 'process.mode')])
  })

  it('keeps unknown keys that resemble no spec key, or several, silent', () => {
    const document = v1({ 'output-media-type': 'text/plain', $comment: 'x', args: [arg({ default: 'x' })] })
    expect(load(document).warnings).toEqual([])
    expect(load({ ...richV2(), 'x-author': 'me', version: 3 }).warnings).toEqual([])
    // "stap" is one edit from "stop" and two from "start"; "utput" is close to "output" and "input".
    expect(load(withProcess({ utput: {} })).warnings).toEqual([])
    expect(load(withRuntime({ timeout: { stap: 1 } })).warnings).toEqual([])
  })

  it('lists every typo in document order', () => {
    const document = { ...richV2(), runtim: {}, args: [arg({ tpye: 'x' }), arg({ name: 'b', arty: 'x' })] }
    expect(load(document).warnings.slice(0, 3)).toEqual([
      typo('$.args[0].tpye', 'type'),
      typo('$.args[1].arty', 'arity'),
      typo('$.runtim', 'runtime'),
    ])
  })

  it('names the typo in the error when it explains a missing field', () => {
    const document = v2({ args: [arg({ backing_type: undefined, 'backing-type': 'integer' })] })
    const error = thrownBy(() => load(document))
    expect(error).toBeInstanceOf(LoadingError)
    expect((error as LoadingError).message).toBe(
      `${TOOL}: $.args[0].backing_type: missing (expected a string); also ${typo('$.args[0].backing-type', 'backing_type')}`,
    )
  })
})

describe('protocol 2 fields in a v1 document', () => {
  it('warns that each one is ignored, so a stream tool never silently becomes a oneshot', () => {
    const spec = load(v1({ process: { mode: 'stream' }, runtime: {}, check: true }))
    expect(spec.protocol).toBe(1)
    expect(spec.process.mode).toBe('oneshot')
    expect(spec.check).toBe(false)
    expect(spec.warnings).toEqual([v2Only('$.process'), v2Only('$.runtime'), v2Only('$.check')])
  })

  it('suggests the v2 key for a typo in a v1 document too', () => {
    expect(load(v1({ proccess: {} })).warnings).toEqual([typo('$.proccess', 'process')])
  })
})

describe('allow_dash', () => {
  it('is read on v2 arguments and command arguments, and left out when not true', () => {
    const spec = load(
      v2({
        args: [arg({ allow_dash: true, mode: 'positional' }), arg({ name: 'b', allow_dash: false })],
        commands: [{ name: 'go', description: 'd', args: [arg({ allow_dash: true })] }],
      }),
    )
    expect(spec.args[0]?.allowDash).toBe(true)
    expect(spec.args[1]).not.toHaveProperty('allowDash')
    expect(spec.commands[0]?.args[0]?.allowDash).toBe(true)
    expect(spec.warnings).toEqual([])
  })

  it('is a protocol 2 field: ignored, with a warning, in a v1 document', () => {
    const spec = load(v1({ args: [arg({ allow_dash: true })] }))
    expect(spec.args[0]).not.toHaveProperty('allowDash')
    expect(spec.warnings).toEqual([v2Only('$.args[0].allow_dash')])
  })

  it('must be a boolean', () => {
    const error = thrownBy(() => load(v2({ args: [arg({ allow_dash: 'yes' })] })))
    expect(LoadingError.is(error)).toBe(true)
    expect(error).toMatchObject({
      code: DescribeErrorCodes.INVALID_FIELD,
      field: '$.args[0].allow_dash',
      reason: 'expected a boolean; got "yes"',
    })
  })
})
