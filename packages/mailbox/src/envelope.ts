/**
 * Who sent an envelope: a service process (`process:p1`), a task (`task:t3`) or toolvisor itself
 * (`system`). Wake rules and digests are per sender.
 */
export type Sender = `process:${string}` | `task:${string}` | 'system'

/**
 * What an envelope is. `event` (one event, the event itself as body) and `digest` (several events,
 * an array as body) are news that folding may merge; `completion` (a task or process ended) and
 * `control` are never folded away.
 */
export type EnvelopeKind = 'event' | 'digest' | 'completion' | 'control'

/**
 * One piece of mail, as stored and read. Immutable once accepted.
 *
 * The accounting is exact: for every sender, the sum of `events` over its envelopes in a session
 * equals the number of events it was given (pushed into its sources plus `event` posts), whatever
 * the digest policy, the delivery points, the size bound and the folding.
 */
export interface Envelope {
  /** Unique in the session: the poster's id, or `m<seq>` for an envelope the mailbox made. */
  readonly id: string
  /** Assigned on acceptance, increasing within the session; a folded digest gets a new one. */
  readonly seq: number
  /** The sender. */
  readonly from: Sender
  /** When the mailbox accepted it (ISO 8601). */
  readonly at: string
  /** What it is; decides the shape of `body`. */
  readonly kind: EnvelopeKind
  /**
   * `event`: the event. `digest`: the events kept, oldest first (an array). `completion`,
   * `control`: what the poster gave.
   */
  readonly body: unknown
  /**
   * How many source events the envelope stands for: 1 for `event`; for `digest`, the events in
   * `body` plus `omitted`; 0 for `completion` and `control` (news about a source, not its events).
   */
  readonly events: number
  /**
   * How many of `events` are not in `body` because the per-envelope size bound was reached: the
   * body keeps the newest events that fit, the older ones are counted here (never dropped
   * silently). Always 0 for `event`, `completion` and `control`.
   */
  readonly omitted: number
}

/**
 * How a source turns events into envelopes, as a tool declares `process.digest` (the same shape
 * as `DigestSpec` of `@toolvisor/describe-v2`, so a parsed spec's digest is passed as is).
 * - `round`: everything since the last delivery point in one envelope, made at the session's
 *   delivery point (`deliver`) or when the source flushes or closes.
 * - `events`: an envelope every `n` events (ruling 15). A delivery point leaves the remainder
 *   pending; it is mailed at a flush, at close, or `digestFlushMs` (the mailbox's bound, 30 s by
 *   default) after its first event.
 * - `seconds`: an envelope `n` seconds after the first event not yet mailed (a timer, `unref`'d);
 *   also at a delivery point, flush or close.
 */
export type DigestPolicy =
  | { readonly per: 'round' }
  | { readonly per: 'events'; readonly n: number }
  | { readonly per: 'seconds'; readonly n: number }

/** What `post` accepts. `digest` envelopes are only made by the mailbox (sources and folding). */
export interface Mail {
  /**
   * The idempotency key: a second post with the same id keeps the first envelope and returns its
   * receipt. Absent: the mailbox names it `m<seq>` (ids of that form are reserved to it).
   */
  readonly id?: string
  /** The sender. */
  readonly from: Sender
  /** `event`: one event (counted as one); `completion`/`control`: never folded away. */
  readonly kind: 'event' | 'completion' | 'control'
  /** The event, or the completion/control details (JSON). */
  readonly body: unknown
}

/** What a post returns. */
export interface Receipt {
  /** The envelope's id. */
  readonly id: string
  /** The seq it was accepted at (for a duplicate: the first post's seq, even if since folded). */
  readonly seq: number
  /** True when the id was already accepted and nothing was stored. */
  readonly duplicate: boolean
}

/** A page of envelopes in seq order. */
export interface MailPage {
  /** The envelopes, oldest first. */
  readonly envelopes: readonly Envelope[]
  /** The seq to read after for the next page (the last one returned, else where the read started). */
  readonly next: number
  /** True when more envelopes follow `next` than `max` allowed. */
  readonly more: boolean
}
