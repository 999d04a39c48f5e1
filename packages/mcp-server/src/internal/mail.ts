import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { Mailbox } from '@toolvisor/mailbox'
import { mailBlock, type ReadBack } from '@toolvisor/toolbox'
import { messageOf } from './result.js'

/** The text after the last block when more mail waits than one result holds. */
export function moreMail(readBack: ReadBack | undefined): string {
  const wait = readBack?.call({ command: 'wait', timeout_seconds: 0 })
  return `[more mail waits than one result holds${wait ? `: call ${wait} to read it` : ''}]`
}

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
 * The session's pending mail as text blocks for the next result (`[mail <id> from process:p1] ...`,
 * `mailBlock`): the session's delivery point, at most `mailBytes` of it, and a last block saying
 * how to read the rest when more waits. None when folding is off or the session has no mailbox.
 */
export function foldMail(options: SessionMailOptions): string[] {
  const { mailbox, sessionId, mailBytes } = options
  if (mailBytes === 0 || !mailbox.isOpen(sessionId)) return []
  const page = mailbox.deliver(sessionId, { maxBytes: mailBytes })
  const blocks = page.envelopes.map((envelope) => mailBlock(envelope))
  if (page.more) blocks.push(moreMail(options.readBack))
  return blocks
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
    const wait = options.readBack?.call({ command: 'wait' })
    const data =
      `[mail waiting from ${from}] it comes with the next tool result of this session` +
      (wait ? `, or call ${wait} to read it now` : '')
    server
      .sendLoggingMessage({ level: 'notice', logger: 'toolvisor.mail', data })
      .catch((error: unknown) => log(`mail notice not sent: ${messageOf(error)}`))
  })
}
