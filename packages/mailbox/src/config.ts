import { z } from 'zod'
import { MailboxError, MailboxErrorCodes } from './errors.js'
import type { MailStore } from './store.js'

const positive = z.number().int().positive()

const fields = z
  .object({
    /** The most unread envelopes per session before older news is folded. */
    maxUnread: positive.default(256),
    /** The most bytes one envelope's body holds as JSON (its events as an array); older ones are omitted. */
    envelopeBytes: positive.default(64 * 1024),
    /** The most events one envelope's body holds; older ones are counted as omitted. */
    envelopeEvents: positive.default(1000),
    /** How many seqs of delivered mail stay readable behind the delivery cursor (for other readers). */
    keepRead: z.number().int().nonnegative().default(256),
    /**
     * The longest an event of a `{per:'events', n}` digest waits for its envelope, in ms: the
     * remainder short of `n` is mailed this long after its first event (0: no bound; it then waits
     * for `n` events, a flush or the source's close).
     */
    digestFlushMs: z.number().int().nonnegative().default(30_000),
  })
  .strict()

/**
 * The mailbox's configuration (the plugin's config; `createMailbox` takes it plus a store). Every
 * field is optional, and so is the whole (`prefault`: an absent config still gets the defaults).
 */
export const MailboxConfig = fields.prefault({})

/** The configuration with every default applied. */
export type MailboxSettings = z.output<typeof MailboxConfig>

/** What `createMailbox` accepts: the configuration, and the store (default: in memory). */
export type MailboxOptions = NonNullable<z.input<typeof MailboxConfig>> & {
  /** Where envelopes, ids and cursors are kept; default `createMemoryStore()`. */
  readonly store?: MailStore
}

/** Validates the configuration part of the options (`MAILBOX_ERR_INVALID_OPTIONS` names the field). */
export function settingsOf(options: z.input<typeof MailboxConfig>): MailboxSettings {
  const result = MailboxConfig.safeParse(options)
  if (result.success) return result.data
  const problems = result.error.issues.map((issue) => {
    const path = issue.path.length > 0 ? `options.${issue.path.map(String).join('.')}` : 'options'
    return `${path}: ${issue.message}`
  })
  throw new MailboxError(
    MailboxErrorCodes.INVALID_OPTIONS,
    `mailbox: invalid options: ${problems.join('; ')}`,
    { cause: result.error },
  )
}
