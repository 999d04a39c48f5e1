export { type AsciicastOptions, AsciicastRecorder } from '@toolvisor/process-runtime'
export { TerminalError, type TerminalErrorCode, TerminalErrorCodes } from './errors.js'
export { KEY_NAMES, type KeyModes, type Keystroke, keyBytes, keystrokeBytes } from './keys.js'
export { BACKLOG_KEPT, Screen, type ScreenOptions, type ScreenSnapshot, screenText } from './screen.js'
export {
  MAX_INPUT_BYTES,
  plainText,
  QUIET_MS,
  type Settled,
  type SettleOptions,
  TerminalSession,
} from './session.js'
