import type { Envelope } from '@toolvisor/mailbox'
import { ESCAPING, type Renderer } from './budget.js'
import type { ReadBack } from './read-back.js'

/** What a `[mail ...]` block is made of: the fields of a mailbox envelope it shows. */
export type MailText = Pick<Envelope, 'id' | 'from' | 'kind' | 'body' | 'events' | 'omitted'>

/**
 * One envelope as the model reads it, starting `[mail <id> from <sender>]`:
 * - `event`: the event (`[mail m3 from process:p1] {"line":"disk full"}`);
 * - `digest`: how many events it stands for, how many of the oldest it left out, then the kept ones
 *   (`[mail m4 from process:p1] 1200 events, the oldest 200 left out: [...]`);
 * - `completion`, `control`: the kind, then the details.
 * Control codes are escaped (decision 0013).
 */
export function mailBlock(mail: MailText, render: Renderer = ESCAPING): string {
  const head = `[mail ${mail.id} from ${mail.from}]`
  const body = render.json(mail.body)
  switch (mail.kind) {
    case 'event':
      return `${head} ${body}`
    case 'digest': {
      const left = mail.omitted > 0 ? `, the oldest ${mail.omitted} left out` : ''
      return `${head} ${mail.events} events${left}: ${body}`
    }
    default:
      return `${head} ${mail.kind}: ${body}`
  }
}

/** What folding needs of a mailbox (`Mailbox` of `@toolvisor/mailbox`, by shape). */
export interface MailSource {
  isOpen(session: string): boolean
  deliver(
    session: string,
    options: { readonly maxBytes: number },
  ): { readonly envelopes: readonly MailText[]; readonly more: boolean }
}

/** How mail is folded into what the model reads next. */
export interface FoldOptions {
  /** The most bytes of envelopes (their JSON) one fold takes; 0 folds nothing. */
  readonly maxBytes: number
  /** The words of the call that reads the rest (none: the last block names no tool). */
  readonly readBack?: ReadBack | undefined
  readonly render?: Renderer
}

/**
 * The one way mail reaches the model in text: the session's pending mail as `[mail ...]` blocks
 * for its next tool result or turn, at most `maxBytes` of it, then a last block saying more waits
 * (and, with a `readBack`, how to read it). It delivers: each envelope is folded once. None when
 * `maxBytes` is 0 or the session has no mailbox. Every surface calls it (`mcp-server` for each
 * result; an in-process host before each turn).
 */
export function foldMail(mailbox: MailSource, session: string, options: FoldOptions): string[] {
  if (options.maxBytes === 0 || !mailbox.isOpen(session)) return []
  const page = mailbox.deliver(session, { maxBytes: options.maxBytes })
  const blocks = page.envelopes.map((envelope) => mailBlock(envelope, options.render))
  if (page.more) blocks.push(moreMail(options.readBack))
  return blocks
}

/** The block after the last one when more mail waits than one fold holds. */
export function moreMail(readBack: ReadBack | undefined): string {
  const wait = readBack?.call({ command: 'wait', timeout_seconds: 0 })
  return `[more mail waits than one result holds${wait ? `: call ${wait} to read it` : ''}]`
}

/** What tells a model that can be told between results (an MCP logging notice) that mail from `from` waits. */
export function mailWaiting(from: string, readBack: ReadBack | undefined): string {
  const wait = readBack?.call({ command: 'wait' })
  return (
    `[mail waiting from ${from}] it comes with the next tool result of this session` +
    (wait ? `, or call ${wait} to read it now` : '')
  )
}
