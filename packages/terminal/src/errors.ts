import { type CodeOf, errorFamily } from '@toolvisor/kernel'

/** Every code this package throws. */
export const TerminalErrorCodes = {
  /** A key name it does not know; the message names it and the names there are. */
  UNKNOWN_KEY: 'TERMINAL_ERR_UNKNOWN_KEY',
  /** Keystrokes, or a screen, asked of a process that runs on pipes. */
  NOT_A_TERMINAL: 'TERMINAL_ERR_NOT_A_TERMINAL',
  /** One send past `MAX_INPUT_BYTES`; nothing of it was typed. */
  INPUT_TOO_LARGE: 'TERMINAL_ERR_INPUT_TOO_LARGE',
} as const

/** A code of this package. */
export type TerminalErrorCode = CodeOf<typeof TerminalErrorCodes>

/** An error of this package, always with a `TERMINAL_ERR_*` code. */
export class TerminalError extends errorFamily<TerminalErrorCode>('terminal') {}
