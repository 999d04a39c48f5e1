import { definePlugin } from '@toolvisor/kernel'
import { createMailbox, MailboxConfig, MailboxToken } from '@toolvisor/mailbox'
import { z } from 'zod'
import { openJournalStore } from './journal.js'

/** The durable mailbox's config: the mailbox's, and where its journal lives. */
export const JournalMailboxConfig = z
  .object({
    /** The directory of `mail.journal` (`toolvisor serve` uses `STATE_DIR/mail`). */
    dir: z.string().min(1),
    /** Past this size the journal is rewritten as one snapshot. */
    compactBytes: z.number().int().positive().optional(),
  })
  .and(MailboxConfig)

/**
 * Provides `mailbox` over the journal store instead of memory: mail survives a restart or a
 * kill -9 of the host, and what was delivered is never delivered again. Use it in place of
 * `mailboxPlugin` (both provide the same token).
 */
export const journalMailboxPlugin = definePlugin({
  name: 'mailbox-journal',
  provides: [MailboxToken],
  config: JournalMailboxConfig,
  apply(ctx, config) {
    const { dir, compactBytes, ...mailboxConfig } = config
    const store = openJournalStore({ dir, ...(compactBytes !== undefined ? { compactBytes } : {}) })
    const mailbox = createMailbox({ ...mailboxConfig, store })
    ctx.provide(MailboxToken, mailbox)
    ctx.onDispose(async () => {
      await mailbox.dispose()
      store.close()
    })
  },
})
