import { type CodeOf, errorFamily } from '@toolvisor/kernel'

/** Codes of the errors the mailbox throws. */
export const MailboxErrorCodes = {
  /** `createMailbox` got options its schema refuses; the message names the field. */
  INVALID_OPTIONS: 'MAILBOX_ERR_INVALID_OPTIONS',
  /** A session that is not open (never opened, or closed): open it first with `mailbox.open`. */
  UNKNOWN_SESSION: 'MAILBOX_ERR_UNKNOWN_SESSION',
  /** A sender that is not `process:<id>`, `task:<id>` or `system`. */
  INVALID_SENDER: 'MAILBOX_ERR_INVALID_SENDER',
  /** A posted envelope with a kind, id or body the mailbox does not accept. */
  INVALID_ENVELOPE: 'MAILBOX_ERR_INVALID_ENVELOPE',
  /** A completion or control body larger than the envelope byte bound (they are never cut). */
  ENVELOPE_TOO_LARGE: 'MAILBOX_ERR_ENVELOPE_TOO_LARGE',
  /** A digest policy other than `round`, `events` with a whole `n >= 1`, `seconds` with `n > 0`. */
  INVALID_DIGEST: 'MAILBOX_ERR_INVALID_DIGEST',
  /** A second open source for one sender in one session. */
  SOURCE_EXISTS: 'MAILBOX_ERR_SOURCE_EXISTS',
  /** A source used after it was closed (by itself, by `closeSession` or by `dispose`). */
  SOURCE_CLOSED: 'MAILBOX_ERR_SOURCE_CLOSED',
  /** A reader name that is empty or `delivery` (that cursor moves only at `deliver`). */
  INVALID_READER: 'MAILBOX_ERR_INVALID_READER',
  /** The mailbox was disposed. */
  DISPOSED: 'MAILBOX_ERR_DISPOSED',
} as const

/** A code of this package. */
export type MailboxErrorCode = CodeOf<typeof MailboxErrorCodes>

/** An error of the mailbox, always with a `MAILBOX_ERR_*` code; `MailboxError.is(e)` works across copies. */
export class MailboxError extends errorFamily<MailboxErrorCode>('mailbox') {}
