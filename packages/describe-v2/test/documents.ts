/** Describe documents the tests build on: small, valid, and easy to break one field at a time. */
import { readFileSync } from 'node:fs'

/** The tool path every test uses unless it is about the path. */
export const TOOL = '/opt/tools/reader'

/** A fixture file from `test/fixtures/`, as the bytes `describe` would print. */
export function fixture(name: string): Uint8Array {
  return readFileSync(new URL(`fixtures/${name}`, import.meta.url))
}

/** A valid argument object; `over` replaces (or, with `undefined`, deletes) fields. */
export function arg(over: Record<string, unknown> = {}): Record<string, unknown> {
  return without({
    name: 'path',
    description: 'the file to read',
    type: 'filepath',
    backing_type: 'string',
    arity: 'single',
    mode: 'dashdashspace',
    ...over,
  })
}

/** A valid v1 document. */
export function v1(over: Record<string, unknown> = {}): Record<string, unknown> {
  return without({ slug: 'reader', description: 'Reads a file', args: [arg()], ...over })
}

/** A valid v2 document (no `process`, no `runtime`). */
export function v2(over: Record<string, unknown> = {}): Record<string, unknown> {
  return without({ protocol: 2, ...v1(), ...over })
}

/** A v2 document with `process` set. */
export function withProcess(process: unknown, over: Record<string, unknown> = {}): Record<string, unknown> {
  return v2({ process, ...over })
}

/** A v2 document with `runtime` set (and `process` when given). */
export function withRuntime(runtime: unknown, process?: unknown): Record<string, unknown> {
  return v2(process === undefined ? { runtime } : { runtime, process })
}

function without(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined))
}

/** The message `JSON.parse` gives for `text` on this Node version. */
export function jsonParseMessage(text: string): string {
  try {
    JSON.parse(text)
  } catch (error) {
    return (error as Error).message
  }
  throw new Error(`${text} parses`)
}

/** A rich v2 document touching every field: the starting point of the mutation tests. */
export function richV2(): Record<string, unknown> {
  return {
    protocol: 2,
    slug: 'log_watcher',
    check: true,
    help: true,
    description: 'Follows a log file and reports matching lines',
    args: [
      arg({ name: 'path', mode: 'dashdashspace' }),
      arg({ name: 'lines', backing_type: 'integer', arity: 'optional', mode: 'dashdashequal' }),
      arg({ name: 'token', mode: 'env', arity: 'optional' }),
      arg({ name: 'filter', mode: 'stdin', arity: 'optional' }),
    ],
    'empty-result': { tag: 'AddMessage', contents: 'nothing yet' },
    commands: [
      {
        name: 'tail',
        description: 'last lines',
        args: [arg({ name: 'n', mode: 'positional', backing_type: 'number' })],
      },
      { name: 'stats', description: 'counters', args: [] },
    ],
    process: {
      mode: 'service',
      output: {
        framing: 'jsonl',
        event: {
          type: 'object',
          properties: { line: { type: 'string' }, level: { type: 'string' } },
          required: ['line'],
        },
      },
      input: {
        framing: 'jsonl',
        event: {
          type: 'object',
          properties: { op: { enum: ['pattern', 'pause', 'resume', 'quit'] }, value: { type: 'string' } },
          required: ['op'],
        },
      },
      digest: { per: 'events', n: 10 },
      ready: { kind: 'line', match: '^ready( on \\d+)?$' },
    },
    runtime: {
      run_as: { user: 'logs', group: 'adm' },
      sandbox: { fs: { read: ['/var/log'], write: ['state'] }, net: 'none', tmp: 'private' },
      envdir: 'env',
      environment: { LC_ALL: 'C', TZ: 'UTC' },
      rundir: 'state',
      timeout: { start: 10, stop: 5, idle: 600 },
      on_exit: 'restart',
      cancel: { send: { op: 'quit' } },
    },
  }
}

/** What `run` throws, or `undefined` when it returns: for asserting on the error itself. */
export function thrownBy(run: () => unknown): unknown {
  try {
    run()
  } catch (error) {
    return error
  }
  return undefined
}
