export { type AsciicastOptions, AsciicastRecorder } from './asciicast.js'
export { TerminalError, type TerminalErrorCode, TerminalErrorCodes } from './errors.js'
export { KEY_NAMES, type KeyModes, type Keystroke, keyBytes, keystrokeBytes } from './keys.js'
export { Screen, type ScreenOptions, type ScreenSnapshot, screenText } from './screen.js'
