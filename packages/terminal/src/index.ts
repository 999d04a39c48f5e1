export {
  KEY_NAMES,
  type KeyModes,
  type Keystroke,
  keyBytes,
  keystrokeBytes,
  UnknownKeyError,
} from './keys.js'
export { Screen, type ScreenOptions, type ScreenSnapshot, screenText } from './screen.js'
