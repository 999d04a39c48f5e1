/**
 * Model-facing text: terminal control codes made visible, and the caller's own input quoted short.
 * See docs/decisions/0013-visible-control-codes.md.
 */

/** How long a quote of the caller's input may be, in characters. */
export const QUOTE_CHARACTERS = 60

/**
 * The caller's input as a message quotes it: JSON text cut to `max` characters, `…` and the full
 * length after the cut. A 5 MiB argument never comes back as a 5 MiB error.
 */
export function quoteInput(value: unknown, max: number = QUOTE_CHARACTERS): string {
  if (typeof value === 'string') {
    if (value.length <= max) return JSON.stringify(value)
    return `${JSON.stringify(value.slice(0, max))}… (${value.length} characters)`
  }
  let json: string | undefined
  try {
    json = JSON.stringify(value)
  } catch {
    json = undefined
  }
  if (json === undefined) return String(typeof value)
  return json.length <= max ? json : `${json.slice(0, max)}… (${json.length} characters of JSON)`
}

/**
 * Code points a terminal or a text renderer acts on instead of showing: C0 controls other than tab
 * and newline, DEL, C1 controls (U+0080–U+009F, U+009B is a one-byte CSI) and the bidirectional
 * overrides and isolates (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control codes is what this regex is for
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g
/** The same, without the C0 controls JSON text escapes already. */
const JSON_UNESCAPED = /[\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g

function escaped(char: string): string {
  return `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`
}

/**
 * Plain text with every control code written as `\uXXXX` (ESC as `\u001b`), so that neither the
 * model nor a terminal showing the answer acts on it. A carriage return before a newline is kept
 * (Windows line ends overwrite nothing); a bare one is an overwrite and is escaped.
 */
export function visibleText(text: string): string {
  return text.replace(CONTROLS, (char, offset: number) =>
    char === '\r' && text.charCodeAt(offset + 1) === 10 ? char : escaped(char),
  )
}

/**
 * JSON text for a model: `JSON.stringify`, and then the control codes JSON leaves raw (DEL, C1,
 * bidi) as `\uXXXX` escapes too. It parses back to the same value: nothing is lost.
 */
export function visibleJson(value: unknown): string {
  return (JSON.stringify(value) ?? 'null').replace(JSON_UNESCAPED, escaped)
}
