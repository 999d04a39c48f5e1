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
  const notice = (data: string): void => {
    server
      .sendLoggingMessage({ level: 'notice', logger: 'toolvisor.mail', data })
      .catch((error: unknown) => log(`mail notice not sent: ${messageOf(error)}`))
  }
  return watchMail(mailbox, sessionId, notice, options.readBack)
}

/**
 * Calls `onMail` when mail waits for `session`: once per delivery point, so a chatty service makes
 * one notice between two reads. Opens the session's mailbox when nothing did. Returns the unwatching.
 */
export function watchMail(
  mailbox: Mailbox,
  session: string,
  onMail: (text: string) => void,
  readBack?: SessionMailOptions['readBack'],
): () => void {
  mailbox.open(session)
  let noticedAt: number | undefined
  return mailbox.watch(session, (from) => {
    const cursor = mailbox.cursor(session)
    if (noticedAt === cursor) return
    noticedAt = cursor
    onMail(mailWaiting(from, readBack))
  })
}
