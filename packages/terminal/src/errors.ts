import { type CodeOf, errorFamily } from '@toolvisor/kernel'

/** Every code this package throws. */
export const TerminalErrorCodes = {
  /** A key name it does not know; the message names it and the names there are. */
  UNKNOWN_KEY: 'TERMINAL_ERR_UNKNOWN_KEY',
} as const

/** A code of this package. */
export type TerminalErrorCode = CodeOf<typeof TerminalErrorCodes>

/** An error of this package, always with a `TERMINAL_ERR_*` code. */
export class TerminalError extends errorFamily<TerminalErrorCode>('terminal') {}
