import type { DigestPolicy, Envelope, Receipt, Sender } from '../envelope.js'
import { MailboxError, MailboxErrorCodes } from '../errors.js'
import type { MailSource, SourceCounters, SourceMail } from '../types.js'
import { Batch, type BatchContents, type BodyBound } from './batch.js'

/** What a source needs from its mailbox. */
export interface SourceHost {
  /** Accepts the envelope a flush made (`key`: a durable source's, remembered by the store). */
  emit(source: Source, contents: BatchContents, key?: string): Envelope
  /** Posts a completion or control envelope for the source's sender (flushing the source first). */
  post(source: Source, mail: SourceMail): Receipt
  /** A `round` source got an event: a waiting session may wake. */
  pending(source: Source): void
  /** The source closed: forget it. */
  detach(source: Source): void
}

/** What makes a source. */
export interface SourceOptions {
  readonly session: string
  readonly from: Sender
  readonly digest: DigestPolicy
  readonly bound: BodyBound
  readonly host: SourceHost
  /** The longest an `events` remainder waits for its envelope (ms; 0: no bound). */
  readonly flushMs: number
  /** A durable source's name (`SourceOpenOptions.durable`), and the events it mailed before. */
  readonly durable?: { readonly name: string; readonly mailed: number }
}

/** The events of one sender in one session, mailed as its digest policy says. */
export class Source implements MailSource {
  readonly session: string
  readonly from: Sender
  readonly digest: DigestPolicy
  readonly #host: SourceHost
  readonly #batch: Batch
  readonly #flushMs: number
  /** The `seconds` timer, or the `events` bound, armed by the first event not yet mailed. */
  #timer: NodeJS.Timeout | undefined
  #closed = false
  #events = 0
  #mailed = 0
  #envelopes = 0
  readonly #durable: { readonly name: string; readonly mailed: number } | undefined

  constructor(options: SourceOptions) {
    this.session = options.session
    this.from = options.from
    this.digest = options.digest
    this.#host = options.host
    this.#batch = new Batch(options.bound)
    this.#flushMs = options.flushMs
    this.#durable = options.durable
  }

  get closed(): boolean {
    return this.#closed
  }

  /** True when events wait for the next envelope. */
  get hasPending(): boolean {
    return this.#batch.events > 0
  }

  push(event: unknown): void {
    this.#mustBeOpen('push')
    this.#events += 1
    // Reopened durable: an event the source mailed before (the same producer, replayed) is dropped.
    if (this.#durable !== undefined && this.#events <= this.#durable.mailed) {
      this.#mailed += 1
      return
    }
    this.#batch.add(event)
    switch (this.digest.per) {
      case 'round':
        this.#host.pending(this)
        return
      case 'events':
        // An envelope every n events (ruling 15); what is short of n waits, at most the bound.
        if (this.#batch.events >= this.digest.n) this.#flush()
        else if (this.#flushMs > 0) this.#arm(this.#flushMs)
        return
      case 'seconds':
        this.#arm(this.digest.n * 1000)
        return
    }
  }

  /**
   * The session's delivery point: `round` and `seconds` mail what is pending; an `events` digest
   * keeps its remainder for its next `n`th event, its bound, a flush or its close.
   */
  delivering(): void {
    if (this.digest.per !== 'events') this.#flush()
  }

  flush(): Envelope | undefined {
    this.#mustBeOpen('flush')
    return this.#flush()
  }

  post(mail: SourceMail): Receipt {
    this.#mustBeOpen('post')
    return this.#host.post(this, mail)
  }

  close(finalBody?: unknown): Receipt | undefined {
    if (this.#closed) return undefined
    this.#flush()
    const receipt =
      finalBody === undefined ? undefined : this.#host.post(this, { kind: 'completion', body: finalBody })
    this.end()
    return receipt
  }

  /** Flushes and closes without a completion (a session closing, the mailbox disposed). */
  end(): void {
    if (this.#closed) return
    this.#flush()
    this.#closed = true
    this.#host.detach(this)
  }

  counters(): SourceCounters {
    return {
      events: this.#events,
      mailed: this.#mailed,
      pending: this.#batch.events,
      pendingBytes: this.#batch.bytes,
      envelopes: this.#envelopes,
    }
  }

  #flush(): Envelope | undefined {
    this.#disarm()
    if (this.#batch.events === 0) return undefined
    const contents = this.#batch.take()
    this.#mailed += contents.events
    this.#envelopes += 1
    const key = this.#durable ? `${this.from}@${this.#durable.name}#${this.#mailed}` : undefined
    return this.#host.emit(this, contents, key)
  }

  #arm(ms: number): void {
    if (this.#timer !== undefined) return
    this.#timer = setTimeout(() => {
      this.#timer = undefined
      this.#flush()
    }, ms)
    // A digest timer must never keep the process alive on its own.
    this.#timer.unref()
  }

  #disarm(): void {
    if (this.#timer === undefined) return
    clearTimeout(this.#timer)
    this.#timer = undefined
  }

  #mustBeOpen(what: string): void {
    if (!this.#closed) return
    throw new MailboxError(
      MailboxErrorCodes.SOURCE_CLOSED,
      `mailbox: cannot ${what}: the source of ${this.from} in session ${JSON.stringify(this.session)} ` +
        `is closed; open a new one with mailbox.source() if the session is still open`,
    )
  }
}
