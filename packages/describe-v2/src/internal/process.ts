import { DescribeErrorCodes } from '../errors.js'
import type {
  EventValidator,
  InputSpec,
  JsonSchema,
  OutputSpec,
  ProcessSpec,
  ReadySpec,
  TerminalSize,
} from '../types.js'
import type { Load } from './load.js'
import { fail } from './load.js'
import type { V2Document } from './schema.js'
import { problemsText, SchemaCompileError } from './schema-problems.js'
import { show } from './text.js'

type RawProcess = NonNullable<V2Document['process']>

/** The process of a v1 tool, and of a v2 tool without `process`: a oneshot whose stdout is the result. */
export function v1Process(): ProcessSpec {
  return { mode: 'oneshot', output: { framing: 'chunks' }, digest: { per: 'round' }, ready: { kind: 'exit' } }
}

/** `field` as path segments (`$.process.output.event` → process, output, event). */
function segmentsOf(field: string): string[] {
  return field.split('.').slice(1)
}

function compiled(schema: JsonSchema, field: string, load: Load): EventValidator {
  try {
    const result = load.schemas.compile(schema)
    for (const warning of result.warnings) load.warnings.push(`${field}: ${warning}`)
    return result.validate
  } catch (error) {
    const why =
      error instanceof SchemaCompileError
        ? problemsText(error.problems, segmentsOf(field))
        : error instanceof Error
          ? error.message
          : String(error)
    const reason = `does not compile as a JSON Schema (draft-07): ${why}`
    return fail(load, DescribeErrorCodes.BAD_EVENT_SCHEMA, field, reason, error)
  }
}

function outputOf(raw: RawProcess['output'], load: Load): OutputSpec {
  const framing = raw?.framing ?? 'jsonl'
  const event = raw?.event
  if (event === undefined) return { framing }
  if (framing !== 'jsonl') {
    load.warnings.push(
      `$.process.output.event is ignored: events are validated under jsonl framing only (framing is ${show(framing)})`,
    )
    return { framing }
  }
  return { framing, event, validate: compiled(event, '$.process.output.event', load) }
}

function inputOf(raw: NonNullable<RawProcess['input']>, load: Load): InputSpec {
  const framing = raw.framing ?? 'jsonl'
  const { event } = raw
  if (event === undefined) return { framing }
  return { framing, event, validate: compiled(event, '$.process.input.event', load) }
}

function readyOf(raw: RawProcess['ready'], mode: ProcessSpec['mode'], load: Load): ReadySpec {
  if (raw === undefined) return mode === 'oneshot' ? { kind: 'exit' } : { kind: 'immediate' }
  if (raw.kind !== 'line') return { kind: raw.kind }
  const { match } = raw
  try {
    return { kind: 'line', match, regex: new RegExp(match) }
  } catch (error) {
    const why = error instanceof Error ? ` (${error.message})` : ''
    const reason = `expected a JavaScript regular expression; got ${show(match)}${why}`
    return fail(load, DescribeErrorCodes.BAD_READY_REGEX, '$.process.ready.match', reason, error)
  }
}

/**
 * `process` with its defaults: oneshot, jsonl framing both ways, digest per round, ready at exit
 * for a oneshot and at once otherwise. Event schemas and `ready.match` are compiled here, once.
 */
export function processOf(raw: V2Document['process'], load: Load): ProcessSpec {
  if (raw === undefined) return v1Process()
  const mode = raw.mode ?? 'oneshot'
  const output = outputOf(raw.output, load)
  const input = raw.input === undefined ? undefined : inputOf(raw.input, load)
  const digest =
    raw.digest === undefined || raw.digest.per === 'round'
      ? { per: 'round' as const }
      : { per: raw.digest.per, n: raw.digest.n }
  // The default digest says nothing; any other is a promise only a service keeps.
  if (raw.digest !== undefined && raw.digest.per !== 'round' && mode !== 'service') {
    load.warnings.push(
      `$.process.digest is ignored: digests fold a service's output into mail, and this is a ${mode} tool`,
    )
  }
  const ready = readyOf(raw.ready, mode, load)
  const terminal = raw.terminal === undefined ? undefined : terminalOf(raw, mode, load)
  const spec = input === undefined ? { mode, output, digest, ready } : { mode, output, input, digest, ready }
  return terminal === undefined ? spec : { ...spec, output: { framing: 'chunks' }, terminal }
}

/**
 * `process.terminal` (decision 0110): `true` is 80x24. On a terminal the output is what the
 * terminal shows, stdout and stderr alike, so it is `chunks` whatever else is declared, and the
 * input is keystrokes: a declaration that says otherwise cannot be honoured and is refused.
 */
function terminalOf(raw: RawProcess, mode: ProcessSpec['mode'], load: Load): TerminalSize {
  const field = '$.process.terminal'
  if (mode === 'oneshot') {
    const reason =
      'a terminal is for a stream or a service (its input is keystrokes, typed while it runs); declare "mode": "stream" or "service"'
    fail(load, DescribeErrorCodes.INVALID_FIELD, field, reason)
  }
  const framing = raw.output?.framing
  if (framing !== undefined && framing !== 'chunks') {
    const reason = `expected "chunks" on a terminal (the output is what the terminal shows, not ${show(framing)} events); got ${show(framing)}`
    fail(load, DescribeErrorCodes.INVALID_FIELD, '$.process.output.framing', reason)
  }
  if (raw.input !== undefined) {
    const reason = "not on a terminal: its input is keystrokes (the `processes` tool's `keys`), not events"
    fail(load, DescribeErrorCodes.INVALID_FIELD, '$.process.input', reason)
  }
  const size = raw.terminal === true ? {} : (raw.terminal ?? {})
  return { columns: size.columns ?? 80, rows: size.rows ?? 24 }
}
