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
 * Code points a terminal or a text renderer acts on, or draws as nothing, instead of showing:
 * - C0 controls other than tab and newline, DEL, and C1 controls (U+0080–U+009F; U+009B is a
 *   one-byte CSI);
 * - the bidirectional marks, embeddings, overrides and isolates (U+061C, U+200E, U+200F,
 *   U+202A–U+202E, U+2066–U+2069): text shown in another order than it is read;
 * - the zero-width and invisible ones (U+00AD soft hyphen, U+180E, U+200B–U+200D, U+2060–U+2064,
 *   U+FEFF) and the tag characters (U+E0000–U+E007F, "ASCII smuggling": each a letter no one sees);
 * - the line and paragraph separators (U+2028, U+2029): a line break for some viewers and not
 *   for others, so a line can be hidden or split where the reader cannot tell.
 * The `u` flag makes a tag character (a surrogate pair) one match. See decision 0013.
 */
const CONTROLS =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control codes is what this regex is for
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff\u{e0000}-\u{e007f}]/gu
/** The same, without the C0 controls JSON text escapes already. */
const JSON_UNESCAPED =
  /[\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff\u{e0000}-\u{e007f}]/gu

/** `\uXXXX` for a code point of the basic plane, `\u{e0041}` above it (one readable token). */
function escaped(char: string): string {
  const code = char.codePointAt(0)!
  return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, '0')}`
}

/** `\uXXXX` for each UTF-16 unit: the only escape JSON has (a tag character is a surrogate pair). */
function jsonEscaped(char: string): string {
  let out = ''
  for (let i = 0; i < char.length; i++) out += `\\u${char.charCodeAt(i).toString(16).padStart(4, '0')}`
  return out
}

/**
 * Plain text with every control code written as `\uXXXX` (ESC as `\u001b`, a tag character as
 * `\u{e0041}`), so that neither the model nor a terminal showing the answer acts on it. A
 * carriage return before a newline is kept (Windows line ends overwrite nothing); a bare one is an
 * overwrite and is escaped.
 */
export function visibleText(text: string): string {
  return text.replace(CONTROLS, (char, offset: number) =>
    char === '\r' && text.charCodeAt(offset + 1) === 10 ? char : escaped(char),
  )
}

/**
 * One line of text for a human: `visibleText`, and every newline shown as `\n` and every carriage
 * return as `\u000d`, so that text from a tool, a model or a client can neither hide behind a
 * line break nor start a line that looks like the speaker's own (a forged footer, a log line).
 */
export function visibleLine(text: string): string {
  return text.replace(CONTROLS, escaped).replaceAll('\n', '\\n')
}

/**
 * JSON text for a model: `JSON.stringify`, and then the control codes JSON leaves raw (DEL, C1,
 * bidi, zero-width, tags) as `\uXXXX` escapes too. It parses back to the same value: nothing is
 * lost. `space` indents as `JSON.stringify` does (a document printed for a human).
 */
export function visibleJson(value: unknown, space?: number): string {
  return (JSON.stringify(value, null, space) ?? 'null').replace(JSON_UNESCAPED, jsonEscaped)
}
