import type { DigestPolicy, Envelope, EnvelopeKind, Mail, MailPage, Receipt, Sender } from './envelope.js'

/** Which senders wake a waiting session: prefixes (`['process:', 'system']`) or a predicate. */
export type WakeOn = readonly string[] | ((from: Sender) => boolean)

/** Per-session options, at `open` or later through `setWakeOn`. */
export interface SessionOptions {
  /** Default: every sender wakes. Mail from a sender that does not wake is still stored and delivered. */
  readonly wakeOn?: WakeOn
}

/** How long `wait` may block. */
export interface WaitOptions {
  /** The bound in milliseconds; absent: no bound (only mail, the signal or a close end it). */
  readonly timeoutMs?: number
  /** Aborting it ends the wait with `aborted`. */
  readonly signal?: AbortSignal
  /**
   * Which senders' news ends this wait (prefixes or a predicate), instead of the session's wake
   * rule: a surface waiting on one process (`['process:p1']`). Default: the session's rule.
   */
  readonly from?: WakeOn
}

/** How much one read returns: at most `max` envelopes and about `maxBytes` of their JSON. */
export interface ReadOptions {
  /** The most envelopes (default: all). */
  readonly max?: number
  /**
   * The most bytes of the envelopes' JSON (a surface's size bound); the first envelope is returned
   * even when larger, so a reader always moves on. Default: no bound.
   */
  readonly maxBytes?: number
}

/** A read by seq: the envelopes with seq greater than `after`. */
export interface PageOptions extends ReadOptions {
  /** The seq to read after (default 0: from the oldest kept). */
  readonly after?: number
}

/** Why `wait` returned. */
export type WaitResult =
  | { readonly reason: 'mail'; readonly from: Sender }
  | { readonly reason: 'timeout' }
  | { readonly reason: 'aborted' }
  | { readonly reason: 'closed' }

/** How a source is opened. */
export interface SourceOpenOptions {
  /**
   * A name unique to what produces the events (a kept process's keeper, decision 0113): each
   * envelope the source makes is remembered by the store as `FROM@NAME#N` (N: the events mailed
   * through it), and a source opened again under the same name drops the first N events pushed to
   * it, which the producer replays after a restart: mailed once, never twice.
   */
  readonly durable?: string
}

/** A source's counts; `events` always equals `mailed + pending`. */
export interface SourceCounters {
  /** Events pushed so far. */
  readonly events: number
  /** Events already in envelopes (kept in a body or counted as omitted). */
  readonly mailed: number
  /** Events pushed and not yet in an envelope. */
  readonly pending: number
  /** The size of the pending events kept for the next body, as a JSON array (at most `envelopeBytes`). */
  readonly pendingBytes: number
  /** Envelopes the source made from its events. */
  readonly envelopes: number
}

/** A completion or control envelope a source posts for its sender. */
export interface SourceMail {
  /** The idempotency key; absent: `m<seq>`. */
  readonly id?: string
  /** `completion` or `control`. */
  readonly kind: 'completion' | 'control'
  /** Its details (JSON). */
  readonly body: unknown
}

/**
 * The events of one sender in one session, digested as its policy says. Made by
 * `mailbox.source(session, from, digest)`; one open source per sender and session.
 */
export interface MailSource {
  /** The session it posts to. */
  readonly session: string
  /** The sender of its envelopes. */
  readonly from: Sender
  /** Its digest policy. */
  readonly digest: DigestPolicy
  /** True once closed (by `close`, `closeSession` or `dispose`); every use then throws. */
  readonly closed: boolean
  /** Takes one event (a JSON value, kept by reference: do not mutate it afterwards). */
  push(event: unknown): void
  /** Mails the pending events now, whatever the policy; returns the envelope, if any was made. */
  flush(): Envelope | undefined
  /** Posts a completion or control envelope after flushing, so it never overtakes earlier events. */
  post(mail: SourceMail): Receipt
  /**
   * Flushes, posts `finalBody` as a completion when given, and closes; a second close does nothing.
   * A `finalBody` over the envelope bound throws `MAILBOX_ERR_ENVELOPE_TOO_LARGE`, the source still open.
   */
  close(finalBody?: unknown): Receipt | undefined
  /** Its counts. */
  counters(): SourceCounters
}

/**
 * Per-session mailboxes (the `mailbox` service). Every call but `open` and `sessions` needs an
 * open session: a post to an unknown or closed session is `MAILBOX_ERR_UNKNOWN_SESSION`, never an
 * implicit open, so mail arriving after a session closed cannot bring back a mailbox nobody reads.
 */
export interface Mailbox {
  /**
   * Opens a session, recovering what the store holds for it. Idempotent: opening an open session
   * changes nothing but its wake rule, when `wakeOn` is given.
   */
  open(session: string, options?: SessionOptions): void
  /** True while the session is open. */
  isOpen(session: string): boolean
  /** The open sessions. */
  sessions(): readonly string[]
  /**
   * Flushes and closes the session's sources, ends its waits (`closed`), removes its mail from the
   * store and returns the envelopes it never delivered.
   */
  closeSession(session: string): readonly Envelope[]
  /** Replaces which senders wake the session's `wait`. */
  setWakeOn(session: string, wakeOn: WakeOn): void
  /**
   * Accepts one envelope, idempotent on `mail.id`. A completion or control envelope first flushes
   * the open source of its sender. At the unread bound, older news is folded first (see README).
   */
  post(session: string, mail: Mail): Receipt
  /** Opens the source of `from`'s events in the session (default digest: `round`). */
  source(session: string, from: Sender, digest?: DigestPolicy, options?: SourceOpenOptions): MailSource
  /**
   * The session's delivery point: flushes the pending events of every `round` and `seconds`
   * source (an `events` digest keeps its remainder short of `n`), returns the envelopes
   * after the delivery cursor (within `options`) and moves the cursor past them.
   */
  deliver(session: string, options?: ReadOptions): MailPage
  /**
   * Withdraws the envelopes of `from` of `kind` that are not delivered yet: news the session was
   * shown another way (a task's end in the status it asked for: `tasks.seen`), so it reaches the
   * model once. Returns how many; delivered mail is never taken back.
   */
  withdraw(session: string, match: { readonly from: Sender; readonly kind: EnvelopeKind }): number
  /** The envelopes after a named reader's cursor (within `options`); moves that cursor only. */
  read(session: string, reader: string, options?: ReadOptions): MailPage
  /** The envelopes with seq greater than `options.after` (default 0); moves no cursor. */
  page(session: string, options?: PageOptions): MailPage
  /** Where a reader's cursor is (default: the delivery cursor); 0 before any read. */
  cursor(session: string, reader?: string): number
  /** How many envelopes lie after the delivery cursor. */
  unread(session: string): number
  /**
   * Resolves with `mail` at once or as soon as the session has unread mail, or pending `round`
   * events, from a sender that wakes it; else with `timeout`, `aborted` or `closed`.
   */
  wait(session: string, options?: WaitOptions): Promise<WaitResult>
  /**
   * Calls `listener` synchronously with the sender of every piece of news that wakes the session
   * (an envelope accepted, or an event pending for a `round` digest), until the returned function
   * is called or the session closes: how a surface learns that mail waits without taking it (an
   * MCP logging notification). A listener that throws becomes a process warning.
   */
  watch(session: string, listener: (from: Sender) => void): () => void
  /**
   * Calls `listener` synchronously with every batch the delivery point hands out (`deliver`, not
   * a named reader's `read`): how a surface learns that mail reached its session's client (a
   * harness clearing an item the mail made news). A listener that throws becomes a process warning.
   */
  onDeliver(listener: (session: string, envelopes: readonly Envelope[]) => void): () => void
  /** Flushes and closes every source, clears its timers, ends every wait; stored mail stays in the store. */
  dispose(): void
}
