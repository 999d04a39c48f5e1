import { visibleJson, visibleText } from './text.js'

/**
 * Rendering of output for a model-facing answer, within a byte budget (the operator's
 * `resultBytes`, 256 KiB by default). See docs/decisions/0011-one-answer-budget.md.
 */

/** How values and text become model-facing text: control codes escaped unless the operator keeps them. */
export interface Renderer {
  json(value: unknown): string
  text(text: string): string
}

/** The renderer for a tool: escaping (the default), or raw when the operator keeps its control codes. */
export function rendererFor(keepControls: boolean): Renderer {
  return keepControls
    ? { json: (value) => JSON.stringify(value) ?? 'null', text: (text) => text }
    : { json: visibleJson, text: visibleText }
}

/** Escapes control codes: what every answer that is not a tool's own output uses. */
export const ESCAPING: Renderer = rendererFor(false)

/**
 * Text as it stands inside a JSON string of an answer (`visibleJson` escapes): to measure text
 * that is then given raw to a JSON answer.
 */
export const IN_JSON: Renderer = { json: visibleJson, text: (text) => visibleJson(text).slice(1, -1) }

/**
 * An event as it goes into a JSON answer. `chunks` events are bytes: text when they are UTF-8, else
 * `{"base64": ..., "bytes": n}` (the model never gets bytes mangled into U+FFFD).
 */
export function eventValue(value: unknown): unknown {
  if (!Buffer.isBuffer(value)) return value
  const text = value.toString('utf8')
  if (!text.includes('\uFFFD') || Buffer.from(text, 'utf8').equals(value)) return text
  return { base64: value.toString('base64'), bytes: value.length }
}

/** An event too large for an answer on its own, in its place: its size and the head of its text. */
export interface CutEvent {
  readonly cut: true
  readonly bytes: number
  readonly head: string
}

/** The pieces of an answer that fit, and how many source values they stand for. */
export interface Fitted {
  /** The rendered pieces (JSON texts of the values), in source order. */
  readonly pieces: string[]
  /** The values, in source order (a value too large on its own is a `CutEvent`). */
  readonly values: unknown[]
  /** Bytes the pieces take, separators included. */
  readonly bytes: number
}

/**
 * The values from the first, rendered, while they fit in `budget` bytes (a separator byte each).
 * When the first alone does not fit, it is cut (a `CutEvent`): an answer is never empty only
 * because one event is large.
 */
export function fitForward(values: readonly unknown[], budget: number, render: Renderer): Fitted {
  const pieces: string[] = []
  const kept: unknown[] = []
  let bytes = 0
  for (const value of values) {
    const piece = render.json(value)
    const size = Buffer.byteLength(piece) + 1
    if (bytes + size > budget) {
      if (kept.length === 0) {
        const cut = cutEvent(piece, size - 1, budget, render)
        pieces.push(render.json(cut))
        kept.push(cut)
      }
      break
    }
    bytes += size
    pieces.push(piece)
    kept.push(value)
  }
  return { pieces, values: kept, bytes }
}

/** The same from the last value backwards: the newest that fit, returned oldest first. */
export function fitBackward(values: readonly unknown[], budget: number, render: Renderer): Fitted {
  const reversed = fitForward([...values].reverse(), budget, render)
  return { pieces: reversed.pieces.reverse(), values: reversed.values.reverse(), bytes: reversed.bytes }
}

function cutEvent(piece: string, bytes: number, budget: number, render: Renderer): CutEvent {
  // Room for the envelope: {"cut":true,"bytes":N,"head":"..."} and the escapes of the head's JSON.
  const room = Math.max(0, Math.floor((budget - 64) / 2))
  return { cut: true, bytes, head: cutText(piece, room, render).text }
}

/**
 * `text` cut to at most `budget` bytes of UTF-8 at a code point boundary, after rendering.
 * `cut` says whether anything was left out.
 */
export function cutText(
  text: string,
  budget: number,
  render: Renderer = ESCAPING,
): { text: string; cut: boolean } {
  const rendered = render.text(text)
  if (Buffer.byteLength(rendered) <= budget) return { text: rendered, cut: false }
  const bytes = Buffer.from(rendered, 'utf8')
  return { text: bytes.subarray(0, utf8Boundary(bytes, Math.max(0, budget))).toString('utf8'), cut: true }
}

/** Bytes of a stream rendered for an answer: the text, and how many of the bytes it stands for. */
export interface FittedBytes {
  readonly text: string
  /** Bytes of the source the text stands for (the next read starts after them). */
  readonly used: number
  /** True when the bytes were not UTF-8: `text` is their base64. */
  readonly base64: boolean
}

/**
 * As many of `bytes` as fit in `budget` once rendered: text when they are UTF-8 (cut at a code
 * point boundary, so a next read goes on exactly), else base64. Control codes are escaped by
 * `render`, which is why the fit is measured after rendering.
 */
export function fitBytes(bytes: Buffer, budget: number, render: Renderer = ESCAPING): FittedBytes {
  let length = Math.min(bytes.length, Math.max(0, budget))
  for (;;) {
    const end = utf8Boundary(bytes, length)
    const slice = bytes.subarray(0, end)
    const value = eventValue(slice)
    // Not UTF-8, or starting inside a character (an offset the caller chose): base64, byte-exact.
    if (typeof value !== 'string' || (end === 0 && bytes.length > 0)) {
      const raw = Math.min(bytes.length, Math.floor((budget * 3) / 4))
      return { text: bytes.subarray(0, raw).toString('base64'), used: raw, base64: true }
    }
    const text = render.text(value)
    const size = Buffer.byteLength(text)
    if (size <= budget) return { text, used: end, base64: false }
    // Escapes made it longer: shrink in proportion, and try again.
    length = Math.min(end - 1, Math.floor((end * budget) / size))
  }
}

/** The largest end <= `length` that does not split a UTF-8 sequence of `bytes`. */
function utf8Boundary(bytes: Buffer, length: number): number {
  if (length >= bytes.length) return bytes.length
  let end = length
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--
  return end
}
