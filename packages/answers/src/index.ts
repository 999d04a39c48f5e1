export type { CutEvent, Fitted, FittedBytes, Renderer } from './budget.js'
export {
  cutText,
  ESCAPING,
  eventValue,
  fitBackward,
  fitBytes,
  fitForward,
  IN_JSON,
  rendererFor,
} from './budget.js'
export type { FoldOptions, MailSource, MailText } from './mail-text.js'
export { foldMail, mailBlock, mailWaiting } from './mail-text.js'
export type { ReadBack, ReadBackOf, ReadBackRequest } from './read-back.js'
export { ReadBackToken } from './read-back.js'
export { quoteInput, visibleJson, visibleLine, visibleText } from './text.js'
