/**
 * `process.terminal` (decision 0110): a stream or a service on a pseudo-terminal. Its output is
 * what the terminal shows (`chunks`), its input keystrokes: a declaration that cannot be honoured
 * on a terminal is refused at load, naming the field, never run on pipes instead.
 */
import { describe, expect, it } from 'vitest'
import { arg, TOOL, thrownBy, withProcess, withRuntime } from '../test/documents.js'
import { LoadingError } from './errors.js'
import { parseDescribe } from './parse.js'

const load = (document: unknown) => parseDescribe(JSON.stringify(document), TOOL)

describe('process.terminal', () => {
  it('takes true (80x24) or a size, for a stream or a service, and makes the output chunks', () => {
    expect(load(withProcess({ mode: 'stream', terminal: true })).process).toMatchObject({
      mode: 'stream',
      output: { framing: 'chunks' },
      terminal: { columns: 80, rows: 24 },
    })
    const sized = load(
      withProcess({ mode: 'service', terminal: { columns: 120 }, output: { framing: 'chunks' } }),
    )
    expect(sized.process.terminal).toEqual({ columns: 120, rows: 24 })
    expect(sized.warnings).toEqual([])
    expect(load(withProcess({ mode: 'stream' })).process.terminal).toBeUndefined()
  })

  it.each<[string, unknown, string]>([
    [
      'a oneshot',
      withProcess({ terminal: true }),
      '$.process.terminal: a terminal is for a stream or a service',
    ],
    [
      'jsonl events',
      withProcess({ mode: 'stream', terminal: true, output: { framing: 'jsonl' } }),
      '$.process.output.framing: expected "chunks" on a terminal',
    ],
    [
      'declared input events',
      withProcess({ mode: 'service', terminal: true, input: { framing: 'lines' } }),
      '$.process.input: not on a terminal: its input is keystrokes',
    ],
    [
      'a cancel sent as an event',
      withRuntime({ cancel: { send: 'quit' } }, { mode: 'service', terminal: true }),
      '$.runtime.cancel.send: needs $.process.input',
    ],
    [
      'an argument written to stdin',
      withProcess({ mode: 'stream', terminal: true }, { args: [arg({ name: 'text', mode: 'stdin' })] }),
      '$.args[0].mode: not "stdin" on a terminal',
    ],
    [
      'a size no terminal has',
      withProcess({ mode: 'stream', terminal: { columns: 0 } }),
      '$.process.terminal.columns',
    ],
  ])('refuses %s, naming the field', (_what, document, message) => {
    const error = thrownBy(() => load(document))
    expect(LoadingError.is(error)).toBe(true)
    expect((error as Error).message).toContain(message)
  })

  it('warns of a misspelt key inside it', () => {
    const spec = load(withProcess({ mode: 'stream', terminal: { colums: 100 } }))
    expect(spec.warnings).toEqual([
      '$.process.terminal.colums: unknown key, ignored; did you mean "columns"?',
    ])
  })
})
