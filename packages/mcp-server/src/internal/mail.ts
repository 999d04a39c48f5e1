import type { Server } from '@modelcontextprotocol/server'
import { mailWaiting, type ReadBack } from '@toolvisor/answers'
import type { Mailbox } from '@toolvisor/mailbox'
import { messageOf } from './result.js'

/** What the mail of one connection's session needs. */
export interface SessionMailOptions {
  readonly mailbox: Mailbox
  readonly sessionId: string
  /** The most bytes of mail folded into one result (the envelopes' JSON); 0: never fold. */
  readonly mailBytes: number
  readonly log: (line: string) => void
  /** The words of the call that reads the mail that waits (none: the texts name no tool). */
  readonly readBack?: ReadBack | undefined
}

/**
 * Opens the session's mailbox when nothing did, and tells the client, as an MCP logging notification (`notifications/message`, level `notice`,
 * logger `toolvisor.mail`), that mail waits for the session: once per delivery point, so a
 * chatty service makes one notice between two results, not one per event. A client that set a
 * higher level (`logging/setLevel`) gets none. Returns the unwatching.
 */
export function noticeMail(options: SessionMailOptions & { readonly server: Server }): () => void {
  const { mailbox, sessionId, server, log } = options
  // Nothing opened the session's mailbox (a host without the sessions hooks of tool-processes).
  mailbox.open(sessionId)
  let noticedAt: number | undefined
  return mailbox.watch(sessionId, (from) => {
    const cursor = mailbox.cursor(sessionId)
    if (noticedAt === cursor) return
    noticedAt = cursor
    const data = mailWaiting(from, options.readBack)
    server
      .sendLoggingMessage({ level: 'notice', logger: 'toolvisor.mail', data })
      .catch((error: unknown) => log(`mail notice not sent: ${messageOf(error)}`))
  })
}
