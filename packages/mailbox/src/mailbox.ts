import { type MailboxOptions, type MailboxSettings, settingsOf } from './config.js'
import type { DigestPolicy, Envelope, EnvelopeKind, Mail, MailPage, Receipt, Sender } from './envelope.js'
import { MailboxError, MailboxErrorCodes } from './errors.js'
import { type BodyBound, oneEvent } from './internal/batch.js'
import { type Draft, envelopeOf, seqsOf } from './internal/draft.js'
import { foldContents, foldGroup } from './internal/fold.js'
import { pageOf } from './internal/page.js'
import { block, type SessionState, tellWatchers, wakeAll, wakeFor, wakeRule } from './internal/session.js'
import { Source, type SourceHost } from './internal/source.js'
import {
  checkDigest,
  checkMail,
  checkNoSource,
  checkReader,
  checkSender,
  checkWhole,
  DELIVERY,
} from './internal/validate.js'
import { createMemoryStore, type MailStore } from './store.js'
import type {
  Mailbox,
  MailSource,
  PageOptions,
  ReadOptions,
  SessionOptions,
  SourceOpenOptions,
  WaitOptions,
  WaitResult,
  WakeOn,
} from './types.js'

/**
 * Makes a mailbox. Options are validated here (`MAILBOX_ERR_INVALID_OPTIONS`); the store defaults
 * to memory. A durable store's package makes its own plugin around `createMailbox({ store })`.
 */
export function createMailbox(options: MailboxOptions = {}): Mailbox {
  const { store = createMemoryStore(), ...config } = options
  return new StoredMailbox(settingsOf(config), store)
}

class StoredMailbox implements Mailbox {
  readonly #settings: MailboxSettings
  readonly #store: MailStore
  readonly #bound: BodyBound
  readonly #sessions = new Map<string, SessionState>()
  readonly #delivered = new Set<(session: string, envelopes: readonly Envelope[]) => void>()
  /** What every source of this mailbox is made with: the envelope bound, the host, the events bound. */
  readonly #sourced: { readonly bound: BodyBound; readonly host: SourceHost; readonly flushMs: number }
  #disposed = false

  constructor(settings: MailboxSettings, store: MailStore) {
    this.#settings = settings
    this.#store = store
    this.#bound = { bytes: settings.envelopeBytes, events: settings.envelopeEvents }
    const host: SourceHost = {
      emit: (source, contents, key) =>
        this.#accept(this.#state(source.session), {
          ...contents,
          from: source.from,
          ...(key ? { id: key } : {}),
        }),
      post: (source, mail) => this.post(source.session, { ...mail, from: source.from }),
      pending: (source) => this.#news(this.#state(source.session), source.from),
      detach: (source) => void this.#sessions.get(source.session)?.sources.delete(source.from),
    }
    this.#sourced = { bound: this.#bound, host, flushMs: settings.digestFlushMs }
  }

  open(session: string, options: SessionOptions = {}): void {
    this.#alive()
    const open = this.#sessions.get(session)
    if (open !== undefined) {
      if (options.wakeOn !== undefined) open.wakes = wakeRule(options.wakeOn)
      return
    }
    this.#sessions.set(session, {
      id: session,
      wakes: wakeRule(options.wakeOn),
      unread: this.#unreadOf(session).length,
      lastSeq: this.#store.lastSeq(session),
      sources: new Map(),
      waiters: new Set(),
      watchers: new Set(),
    })
  }

  isOpen(session: string): boolean {
    return this.#sessions.has(session)
  }

  sessions(): readonly string[] {
    return [...this.#sessions.keys()]
  }

  closeSession(session: string): readonly Envelope[] {
    const state = this.#state(session)
    // What the close itself flushes is no news to anyone: the session is going.
    state.watchers.clear()
    for (const source of [...state.sources.values()]) source.end()
    const undelivered = this.#unreadOf(session)
    this.#store.drop(session)
    this.#sessions.delete(session)
    wakeAll(state.waiters, { reason: 'closed' })
    return undelivered
  }

  setWakeOn(session: string, wakeOn: WakeOn): void {
    this.#state(session).wakes = wakeRule(wakeOn)
  }

  post(session: string, mail: Mail): Receipt {
    const state = this.#state(session)
    checkMail(session, mail)
    if (mail.id !== undefined) {
      const seq = this.#store.seqOf(session, mail.id)
      if (seq !== undefined) return { id: mail.id, seq, duplicate: true }
    }
    if (mail.kind !== 'event') checkWhole(session, mail, this.#settings.envelopeBytes)
    const contents =
      mail.kind === 'event'
        ? oneEvent(mail.body, this.#bound)
        : { kind: mail.kind, body: mail.body, events: 0, omitted: 0 }
    // A completion must not overtake the events its sender produced before it.
    if (mail.kind !== 'event') state.sources.get(mail.from)?.flush()
    const envelope = this.#accept(state, { ...contents, from: mail.from, id: mail.id })
    return { id: envelope.id, seq: envelope.seq, duplicate: false }
  }

  source(
    session: string,
    from: Sender,
    digest: DigestPolicy = { per: 'round' },
    options: SourceOpenOptions = {},
  ): MailSource {
    const state = this.#state(session)
    checkSender(from)
    checkDigest(from, digest)
    checkNoSource(state.sources.has(from), session, from)
    const name = options.durable
    const durable =
      name === undefined ? undefined : { name, mailed: this.#store.lastKeyed(session, `${from}@${name}#`) }
    const source = new Source({ session, from, digest, ...this.#sourced, ...(durable ? { durable } : {}) })
    state.sources.set(from, source)
    return source
  }

  deliver(session: string, options: ReadOptions = {}): MailPage {
    const state = this.#state(session)
    for (const source of state.sources.values()) source.delivering()
    const page = pageOf(this.#store, session, this.#store.cursor(session, DELIVERY), options)
    if (page.envelopes.length > 0) {
      this.#store.setCursor(session, DELIVERY, page.next)
      state.unread -= page.envelopes.length
      this.#store.trim(session, page.next - this.#settings.keepRead)
      for (const listener of this.#delivered) {
        try {
          listener(session, page.envelopes)
        } catch (error) {
          process.emitWarning(error as Error)
        }
      }
    }
    return page
  }

  onDeliver(listener: (session: string, envelopes: readonly Envelope[]) => void): () => void {
    // A wrapper per call, so one function subscribed twice is called twice.
    const entry = (session: string, envelopes: readonly Envelope[]): void => listener(session, envelopes)
    this.#delivered.add(entry)
    return () => void this.#delivered.delete(entry)
  }

  read(session: string, reader: string, options: ReadOptions = {}): MailPage {
    this.#state(session)
    checkReader(reader)
    const page = pageOf(this.#store, session, this.#store.cursor(session, reader), options)
    if (page.envelopes.length > 0) this.#store.setCursor(session, reader, page.next)
    return page
  }

  page(session: string, options: PageOptions = {}): MailPage {
    this.#state(session)
    return pageOf(this.#store, session, options.after ?? 0, options)
  }

  withdraw(session: string, match: { readonly from: Sender; readonly kind: EnvelopeKind }): number {
    const state = this.#state(session)
    const seqs = this.#unreadOf(session)
      .filter((envelope) => envelope.from === match.from && envelope.kind === match.kind)
      .map((envelope) => envelope.seq)
    if (seqs.length > 0) this.#store.remove(session, seqs)
    state.unread -= seqs.length
    return seqs.length
  }

  cursor(session: string, reader: string = DELIVERY): number {
    this.#state(session)
    return this.#store.cursor(session, reader)
  }

  unread(session: string): number {
    return this.#state(session).unread
  }

  wait(session: string, options: WaitOptions = {}): Promise<WaitResult> {
    const state = this.#state(session)
    const wakes = options.from === undefined ? undefined : wakeRule(options.from)
    const from = this.#wakingNews(state, wakes ?? state.wakes)
    if (from !== undefined) return Promise.resolve({ reason: 'mail', from })
    return block(state.waiters, options, wakes)
  }

  watch(session: string, listener: (from: Sender) => void): () => void {
    const state = this.#state(session)
    // A wrapper per call, so watching with one function twice gives two independent watches.
    const watcher = (from: Sender): void => listener(from)
    state.watchers.add(watcher)
    return () => void state.watchers.delete(watcher)
  }

  dispose(): void {
    if (this.#disposed) return
    const errors: unknown[] = []
    for (const state of this.#sessions.values()) {
      for (const source of [...state.sources.values()]) {
        try {
          source.end()
        } catch (error) {
          errors.push(error)
        }
      }
    }
    this.#disposed = true
    for (const state of this.#sessions.values()) wakeAll(state.waiters, { reason: 'closed' })
    this.#sessions.clear()
    if (errors.length > 0) throw new AggregateError(errors, 'mailbox: flushing sources at dispose failed')
  }

  /** Stores a new envelope, folding older news first when the session is at its unread bound. */
  #accept(state: SessionState, draft: Draft): Envelope {
    if (state.unread >= this.#settings.maxUnread) this.#fold(state)
    const envelope = this.#envelope(state, draft)
    this.#store.append(state.id, envelope, draft.id)
    state.unread += 1
    this.#news(state, envelope.from)
    return envelope
  }

  /** Folds one sender's unread news into one digest (see `foldGroup`); may find nothing to fold. */
  #fold(state: SessionState): void {
    const group = foldGroup(this.#unreadOf(state.id))
    if (group === undefined) return
    const contents = foldContents(group, this.#bound)
    const digest = this.#envelope(state, { ...contents, from: group[0]!.from })
    this.#store.fold(state.id, seqsOf(group), digest)
    state.unread -= group.length - 1
  }

  #envelope(state: SessionState, draft: Draft): Envelope {
    return envelopeOf(++state.lastSeq, draft)
  }

  #unreadOf(session: string): readonly Envelope[] {
    return this.#store.read(session, this.#store.cursor(session, DELIVERY), Number.POSITIVE_INFINITY)
  }

  /** The sender of the oldest news that `wakes` takes: unread mail, or pending `round` events. */
  #wakingNews(state: SessionState, wakes: (from: Sender) => boolean): Sender | undefined {
    if (state.unread > 0) {
      const envelope = this.#unreadOf(state.id).find((unread) => wakes(unread.from))
      if (envelope !== undefined) return envelope.from
    }
    for (const source of state.sources.values()) {
      if (source.digest.per === 'round' && source.hasPending && wakes(source.from)) return source.from
    }
    return undefined
  }

  #news(state: SessionState, from: Sender): void {
    if (state.waiters.size > 0) wakeFor(state, from)
    if (state.watchers.size > 0 && state.wakes(from)) tellWatchers(state, from)
  }

  #state(session: string): SessionState {
    this.#alive()
    const state = this.#sessions.get(session)
    if (state !== undefined) return state
    throw new MailboxError(
      MailboxErrorCodes.UNKNOWN_SESSION,
      `mailbox: no open session ${JSON.stringify(session)}; open it with mailbox.open() first ` +
        `(a closed session's mail is gone, and mail is never posted into a session implicitly)`,
    )
  }

  #alive(): void {
    if (!this.#disposed) return
    throw new MailboxError(MailboxErrorCodes.DISPOSED, 'mailbox: the mailbox is disposed; make a new one')
  }
}
