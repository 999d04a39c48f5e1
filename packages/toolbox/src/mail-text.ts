import { ESCAPING, type Renderer } from './budget.js'

/**
 * What a `[mail ...]` block is made of: the fields of a mailbox envelope (`Envelope` of
 * `@toolvisor/mailbox`), by shape, so that every surface renders mail the same way.
 */
export interface MailText {
  readonly id: string
  readonly from: string
  readonly kind: 'event' | 'digest' | 'completion' | 'control'
  readonly body: unknown
  readonly events: number
  readonly omitted: number
}

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
