import type { DigestPolicy, Mail, Sender } from '../envelope.js'
import { MailboxError, MailboxErrorCodes } from '../errors.js'
import { sizeOf } from './batch.js'

/** The store's name for the session's delivery cursor; no reader may use it. */
export const DELIVERY = 'delivery'

const SENDER = /^(?:process|task):\S+$/
/** Ids the mailbox gives the envelopes it makes; a poster may not take one. */
const RESERVED_ID = /^m\d+$/
const POSTABLE: readonly string[] = ['event', 'completion', 'control']

/** Throws unless `from` is `process:<id>`, `task:<id>` or `system`. */
export function checkSender(from: unknown): asserts from is Sender {
  if (from === 'system' || (typeof from === 'string' && SENDER.test(from))) return
  throw new MailboxError(
    MailboxErrorCodes.INVALID_SENDER,
    `mailbox: sender ${JSON.stringify(from)} is not "process:<id>", "task:<id>" or "system"`,
  )
}

/** Throws unless `mail` has a postable kind, a free id (or none) and a valid sender. */
export function checkMail(session: string, mail: Mail): void {
  checkSender(mail.from)
  const where = `mailbox: post to session ${JSON.stringify(session)} from ${mail.from}`
  if (!POSTABLE.includes(mail.kind)) {
    throw new MailboxError(
      MailboxErrorCodes.INVALID_ENVELOPE,
      `${where}: kind ${JSON.stringify(mail.kind)} cannot be posted; post "event", "completion" or ` +
        `"control" (digests are made by the mailbox: push events into mailbox.source())`,
    )
  }
  if (mail.id === undefined) return
  if (typeof mail.id !== 'string' || mail.id.length === 0 || RESERVED_ID.test(mail.id)) {
    throw new MailboxError(
      MailboxErrorCodes.INVALID_ENVELOPE,
      `${where}: id ${JSON.stringify(mail.id)} is not allowed; give a non-empty id not of the form ` +
        `m<digits> (reserved to the mailbox), or none`,
    )
  }
}

/** Throws unless `digest` is `round`, `events` with a whole `n >= 1` or `seconds` with `n > 0`. */
export function checkDigest(from: Sender, digest: DigestPolicy): void {
  const valid =
    digest.per === 'round' ||
    (digest.per === 'events' && Number.isInteger(digest.n) && digest.n >= 1) ||
    (digest.per === 'seconds' && Number.isFinite(digest.n) && digest.n > 0)
  if (valid) return
  throw new MailboxError(
    MailboxErrorCodes.INVALID_DIGEST,
    `mailbox: digest ${JSON.stringify(digest)} for ${from} is not {"per":"round"}, ` +
      `{"per":"events","n":<whole number >= 1>} or {"per":"seconds","n":<number > 0>}`,
  )
}

/** Throws unless `reader` names a cursor other than the delivery cursor. */
export function checkReader(reader: string): void {
  if (typeof reader === 'string' && reader.length > 0 && reader !== DELIVERY) return
  throw new MailboxError(
    MailboxErrorCodes.INVALID_READER,
    `mailbox: reader ${JSON.stringify(reader)} cannot be used; name your own non-empty cursor ` +
      `("${DELIVERY}" is the session's, moved only by deliver())`,
  )
}

/** Throws unless a completion or control body fits the envelope bound (they are never cut). */
export function checkWhole(session: string, mail: Mail, envelopeBytes: number): void {
  const bytes = sizeOf(mail.body)
  if (bytes <= envelopeBytes) return
  throw new MailboxError(
    MailboxErrorCodes.ENVELOPE_TOO_LARGE,
    `mailbox: the ${mail.kind} body from ${mail.from} to session ${JSON.stringify(session)} is ` +
      `${bytes} bytes of JSON, over the envelope bound of ${envelopeBytes}; ` +
      `${mail.kind} envelopes are never cut: shorten the body (tails, details)`,
  )
}

/** Throws when the session has an open source for `from` already (`open`). */
export function checkNoSource(open: boolean, session: string, from: Sender): void {
  if (!open) return
  throw new MailboxError(
    MailboxErrorCodes.SOURCE_EXISTS,
    `mailbox: session ${JSON.stringify(session)} already has an open source for ${from}; ` +
      `close it before opening another`,
  )
}
