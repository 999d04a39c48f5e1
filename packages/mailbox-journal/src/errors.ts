import { type CodeOf, errorFamily } from '@toolvisor/kernel'

/** Codes of the errors the mail journal throws. */
export const JournalErrorCodes = {
  /** The journal file exists and cannot be read (permissions, a directory in its place). */
  UNREADABLE: 'JOURNAL_ERR_UNREADABLE',
  /** The store was used after `close()`. */
  CLOSED: 'JOURNAL_ERR_CLOSED',
} as const

/** A code of the mail journal. */
export type JournalErrorCode = CodeOf<typeof JournalErrorCodes>

/** An error of the mail journal. */
export class JournalError extends errorFamily<JournalErrorCode>('mailbox-journal') {}
