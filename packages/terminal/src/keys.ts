/**
 * Keystrokes by name, as a terminal sends them to the program on it: what a model writes
 * (`Enter`, `C-c`, `Up`, `F5`, `M-x`) and the bytes an xterm sends for it. Arrows, Home and End
 * depend on the mode the program set (application cursor keys, DECCKM): `less` and `vim` turn it
 * on, a shell leaves it off, and a key in the wrong form is read as junk.
 */
import { TerminalError } from './errors.js'

/** One piece of input: text, sent as is (UTF-8), or a key by name. */
export type Keystroke = { readonly text: string } | { readonly key: string }

/** The terminal's modes that change what a key sends. */
export interface KeyModes {
  /** Application cursor keys (DECCKM): arrows, Home and End as `ESC O x` instead of `ESC [ x`. */
  readonly applicationCursor?: boolean
}

const ESC = '\x1b'

/** Keys whose bytes never depend on a mode. */
const FIXED: Readonly<Record<string, string>> = {
  Enter: '\r',
  Tab: '\t',
  BackTab: `${ESC}[Z`,
  Escape: ESC,
  Backspace: '\x7f',
  Space: ' ',
  Insert: `${ESC}[2~`,
  Delete: `${ESC}[3~`,
  PageUp: `${ESC}[5~`,
  PageDown: `${ESC}[6~`,
  F1: `${ESC}OP`,
  F2: `${ESC}OQ`,
  F3: `${ESC}OR`,
  F4: `${ESC}OS`,
  F5: `${ESC}[15~`,
  F6: `${ESC}[17~`,
  F7: `${ESC}[18~`,
  F8: `${ESC}[19~`,
  F9: `${ESC}[20~`,
  F10: `${ESC}[21~`,
  F11: `${ESC}[23~`,
  F12: `${ESC}[24~`,
}

/** Keys sent as `ESC [ x` normally and `ESC O x` in application cursor mode. */
const CURSOR: Readonly<Record<string, string>> = {
  Up: 'A',
  Down: 'B',
  Right: 'C',
  Left: 'D',
  Home: 'H',
  End: 'F',
}

/** The control characters `C-x` names besides the letters: `C-@` (NUL) to `C-_`, and `C-?` (DEL). */
const CONTROL_PUNCTUATION: Readonly<Record<string, string>> = {
  '@': '\x00',
  '[': ESC,
  '\\': '\x1c',
  ']': '\x1d',
  '^': '\x1e',
  _: '\x1f',
  '?': '\x7f',
  ' ': '\x00',
}

/** Every key name this module knows, for the error that lists them. */
export const KEY_NAMES: readonly string[] = [
  ...Object.keys(FIXED),
  ...Object.keys(CURSOR),
  'C-a … C-z',
  'C-@ C-[ C-\\ C-] C-^ C-_ C-?',
  'M-<key> (Escape, then the key)',
]

/** The bytes of one key by name; throws `TERMINAL_ERR_UNKNOWN_KEY` for a name it does not know. */
export function keyBytes(name: string, modes: KeyModes = {}): string {
  const fixed = FIXED[name]
  if (fixed !== undefined) return fixed
  const cursor = CURSOR[name]
  if (cursor !== undefined) return `${ESC}${modes.applicationCursor ? 'O' : '['}${cursor}`
  if (/^C-[a-zA-Z]$/.test(name)) return String.fromCharCode(name.toLowerCase().charCodeAt(2) - 96)
  const punctuation = name.startsWith('C-') && name.length === 3 ? CONTROL_PUNCTUATION[name[2]!] : undefined
  if (punctuation !== undefined) return punctuation
  // Meta: Escape, then the key (as an xterm with metaSendsEscape does); `M-x` for a character.
  if (name.startsWith('M-') && name.length > 2) {
    const rest = name.slice(2)
    return ESC + ([...rest].length === 1 ? rest : keyBytes(rest, modes))
  }
  throw new TerminalError(
    'TERMINAL_ERR_UNKNOWN_KEY',
    `unknown key ${JSON.stringify(name.slice(0, 40))}: the keys are ${KEY_NAMES.join(', ')}, or text; names are case-sensitive`,
  )
}

/** The bytes of a sequence of keystrokes, in order; throws `TERMINAL_ERR_UNKNOWN_KEY` before encoding any. */
export function keystrokeBytes(input: readonly Keystroke[], modes: KeyModes = {}): Buffer {
  const parts = input.map((stroke) => ('text' in stroke ? stroke.text : keyBytes(stroke.key, modes)))
  return Buffer.from(parts.join(''), 'utf8')
}
