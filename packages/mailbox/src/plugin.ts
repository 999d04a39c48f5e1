import { definePlugin, token } from '@toolvisor/kernel'
import { MailboxConfig } from './config.js'
import { createMailbox } from './mailbox.js'
import type { Mailbox } from './types.js'

/** The `mailbox` token: per-session envelopes, cursors, wake rules and digests. */
export const MailboxToken = token<Mailbox>('mailbox')

/**
 * The mailbox as a kernel plugin: provides `mailbox` over the in-memory store, configured by
 * `MailboxConfig`. Unloading it flushes every source, clears every digest timer and ends every wait.
 */
export const mailboxPlugin = definePlugin({
  name: 'mailbox',
  provides: [MailboxToken],
  config: MailboxConfig,
  apply(ctx, config) {
    const mailbox = createMailbox(config)
    ctx.provide(MailboxToken, mailbox)
    ctx.onDispose(() => mailbox.dispose())
  },
})
