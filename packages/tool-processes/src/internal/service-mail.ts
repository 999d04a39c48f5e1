import type { DigestPolicy, Mailbox, MailSource } from '@toolvisor/mailbox'

/** What a service tells its session's mailbox: its events, its restarts, its end. */
export interface ServiceMail {
  /** One output event, digested as the tool declares. */
  event(value: unknown): void
  /** A restart: a `control` envelope (never folded away), after the events before it. */
  restarting(id: string, body: Record<string, unknown>): void
  /** The end: the pending events, then a `completion` envelope (`id`); the source closes. */
  ended(id: string, body: Record<string, unknown>): void
  /** Closes the source without news (a start that failed before the service existed). */
  discard(): void
  /**
   * What `processes status` shows of its mail: the declared digest and how many events wait for
   * their envelope (an `events` digest's remainder short of `n`; for `round` and `seconds`, what
   * the next delivery point or timer mails).
   */
  state(): { readonly digest: DigestPolicy; readonly pending: number }
}

/**
 * The mail of service `handle` in `session`: a source `process:<handle>` under the tool's digest.
 * Once the session closed (its mailbox closes the source), everything here does nothing: mail is
 * never posted into a session nobody reads.
 */
export function serviceMail(
  mailbox: Mailbox,
  session: string,
  handle: string,
  digest: DigestPolicy,
  durable?: string,
): ServiceMail {
  // Durable (a kept service, decision 0113): its events replayed after a restart are mailed once.
  const options = durable === undefined ? {} : { durable }
  const source: MailSource = mailbox.source(session, `process:${handle}`, digest, options)
  return {
    event(value) {
      if (!source.closed) source.push(value)
    },
    restarting(id, body) {
      if (!source.closed) source.post({ id, kind: 'control', body })
    },
    ended(id, body) {
      if (source.closed) return
      source.post({ id, kind: 'completion', body })
      source.close()
    },
    discard() {
      source.close()
    },
    state() {
      return { digest, pending: source.counters().pending }
    },
  }
}
