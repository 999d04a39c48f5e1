import type { OutputSpec, ReadySpec } from '@toolvisor/describe-v2'
import { LineFramer, type LineSink } from './framing.js'

/**
 * An event as a process produced it: a parsed JSON value (`jsonl`), a string (`lines`) or bytes
 * (`chunks`), or an `invalid` event `{invalid: true, raw, error}` (ruling 8).
 */
export type EventValue = unknown

/** The shape of an event that could not be taken as declared (ruling 8). */
export interface InvalidEvent {
  readonly invalid: true
  readonly raw: string
  readonly error: string
}

/** True for an `invalid` event. */
export function isInvalidEvent(value: unknown): value is InvalidEvent {
  return typeof value === 'object' && value !== null && (value as { invalid?: unknown }).invalid === true
}

/** Receives what a decoder makes of stdout. */
export interface DecodeSink {
  /** One event, starting at byte `offset` of stdout. */
  event(value: EventValue, offset: number, invalid: boolean): void
  /** The ready line was seen (it is not an event). */
  ready?(offset: number): void
}

/** Turns stdout bytes into events as `process.output` declares, watching for the ready line. */
export interface Decoder {
  push(chunk: Buffer): void
  end(): void
}

/** Options of a decoder. */
export interface DecodeOptions {
  readonly output: OutputSpec
  /** Longest line kept whole; longer ones become `invalid` events with a preview. */
  readonly maxLine: number
  /** Watch for this ready line (kind `line` only). */
  readonly ready?: ReadySpec | undefined
  /** When replaying from a spill file: the byte offset of the ready line to skip. */
  readonly readyOffset?: number | undefined
  /** Where the bytes pushed start in stdout (replays start mid-stream). */
  readonly startOffset?: number
  /**
   * What the spill file holds of an overlong line (at `offset`, `length` bytes), for its note;
   * default `the spill file holds it whole`.
   */
  readonly lineKept?: (offset: number, length: number) => string
}

/** Creates the decoder for a process's stdout. */
export function createDecoder(options: DecodeOptions, sink: DecodeSink): Decoder {
  const { output } = options
  if (output.framing === 'chunks') {
    let offset = options.startOffset ?? 0
    return {
      push(chunk) {
        sink.event(chunk, offset, false)
        offset += chunk.length
      },
      end() {},
    }
  }
  const regex = options.ready?.kind === 'line' ? options.ready.regex : undefined
  let waitingForReady = regex !== undefined && options.readyOffset === undefined
  const readyOffset = options.readyOffset
  const jsonl = output.framing === 'jsonl'
  const lineSink: LineSink = {
    line(buffer, start, end, offset, ascii) {
      if (offset === readyOffset) return
      const text = ascii === undefined ? buffer.toString('utf8', start, end) : ascii.slice(start, end)
      if (waitingForReady && regex?.test(text)) {
        waitingForReady = false
        sink.ready?.(offset)
        return
      }
      if (!jsonl) {
        sink.event(text, offset, false)
        return
      }
      emitJson(text, offset, sink, output.validate)
    },
    overlong(preview, offset, length) {
      if (offset === readyOffset) return
      sink.event(
        invalid(
          `${preview.toString('utf8')}…`,
          `line of ${length} bytes is longer than the ${options.maxLine}-byte bound: cut (${options.lineKept?.(offset, length) ?? 'the spill file holds it whole'})`,
        ),
        offset,
        true,
      )
    },
  }
  const framer = new LineFramer(lineSink, options.maxLine, options.startOffset ?? 0)
  return {
    push: (chunk) => framer.push(chunk),
    end: () => framer.end(),
  }
}

/** One jsonl line as an event: its value, or an invalid event saying why (ruling 8: never dropped). */
function emitJson(
  text: string,
  offset: number,
  sink: DecodeSink,
  validate: ((value: unknown) => string | undefined) | undefined,
): void {
  // A blank line is no JSON value, so an invalid event.
  const why = isBlank(text) ? 'not JSON: a blank line' : tooDeep(text)
  if (why) {
    sink.event(invalid(text, why), offset, true)
    return
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    sink.event(invalid(text, `not JSON: ${(error as Error).message}`), offset, true)
    return
  }
  const problem = validate?.(value)
  if (problem === undefined) sink.event(value, offset, false)
  else sink.event(invalid(text, `does not match output.event: ${problem}`), offset, true)
}

/**
 * True for a line of whitespace only (what `trim()` removes). A line that starts with a printable
 * ASCII character is not blank: that answers nearly every line without trimming it.
 */
function isBlank(text: string): boolean {
  const first = text.charCodeAt(0) // NaN for '': not in (32, 127), so it is trimmed
  if (first > 32 && first < 127) return false
  return text.trim().length === 0
}

/** The deepest nesting of arrays and objects an event may have. */
export const MAX_EVENT_DEPTH = 512

/**
 * Why a line nests deeper than {@link MAX_EVENT_DEPTH}, or `undefined`. Such a value parses, but
 * every consumer that walks it recursively (a schema, `JSON.stringify`) would exhaust its stack.
 * A line too short to nest that deep is not scanned (nearly every line).
 */
function tooDeep(text: string): string | undefined {
  if (text.length < 2 * MAX_EVENT_DEPTH) return undefined
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92)
        i++ // backslash: skip the escaped character
      else if (c === 34) inString = false
    } else if (c === 34) inString = true
    else if (c === 91 || c === 123) {
      if (++depth > MAX_EVENT_DEPTH) return `nested deeper than ${MAX_EVENT_DEPTH} levels`
    } else if (c === 93 || c === 125) depth--
  }
  return undefined
}

function invalid(raw: string, error: string): InvalidEvent {
  return { invalid: true, raw, error }
}
