import type { Envelope } from './envelope.js'

/**
 * Where a mailbox keeps envelopes, ids and cursors: the seam a durable store implements (an
 * append-only journal: each write below is one record). Synchronous on purpose: the mailbox
 * assigns seqs and checks ids without interleaving, and a journal can append with a synchronous
 * write. The mailbox is the only writer; it validates everything it writes, so a store trusts it.
 * Reads of a session the store does not know return empty results, never throw.
 */
export interface MailStore {
  /** Sessions that have anything stored, for a host recovering after a restart. */
  sessions(): readonly string[]
  /**
   * Stores an envelope; its seq is greater than every seq the session had. `key` is the poster's
   * id, remembered with the envelope's seq (until `drop`, even after fold or trim) for idempotent
   * posts; absent for envelopes the mailbox made, whose ids nobody can post again.
   */
  append(session: string, envelope: Envelope, key?: string): void
  /** The seq the envelope posted with this id was accepted at, or `undefined`. */
  seqOf(session: string, id: string): number | undefined
  /** The greatest N of the ids `PREFIX<N>` it remembers for the session (a durable source's, see `source`); 0 for none. */
  lastKeyed(session: string, prefix: string): number
  /** Up to `max` stored envelopes with seq greater than `after`, in seq order (`max` may be Infinity). */
  read(session: string, after: number, max: number): readonly Envelope[]
  /** Replaces the envelopes with these seqs by `digest` (a greater seq than any stored), atomically. */
  fold(session: string, seqs: readonly number[], digest: Envelope): void
  /**
   * Takes the envelopes with these seqs out (mail withdrawn before anyone read it); their ids stay
   * remembered, so posting one again is still a repeat.
   */
  remove(session: string, seqs: readonly number[]): void
  /** Lets go of the envelopes with seq at most `through` (mail every reader that matters has read). */
  trim(session: string, through: number): void
  /** The greatest seq ever stored for the session (0 for none), trimmed or folded ones included. */
  lastSeq(session: string): number
  /** A reader's cursor (the seq it read through; 0 when never set). */
  cursor(session: string, reader: string): number
  /** Sets a reader's cursor (the acknowledgement a durable store keeps). */
  setCursor(session: string, reader: string, seq: number): void
  /** Forgets everything of the session. */
  drop(session: string): void
}

interface StoredSession {
  /** In seq order: appends and folds only ever add a seq greater than every other. */
  envelopes: Envelope[]
  readonly ids: Map<string, number>
  readonly cursors: Map<string, number>
  lastSeq: number
}

/** Everything a memory store holds, as plain data: what a durable store writes as its snapshot. */
export interface StoreSnapshot {
  readonly sessions: ReadonlyArray<{
    readonly session: string
    readonly envelopes: readonly Envelope[]
    readonly ids: ReadonlyArray<readonly [string, number]>
    readonly cursors: ReadonlyArray<readonly [string, number]>
    readonly lastSeq: number
  }>
}

/** A memory store that can also give what it holds as a snapshot. */
export interface MemoryStore extends MailStore {
  snapshot(): StoreSnapshot
}

/** The default store: everything in memory, gone with the process; `from` restores a snapshot. */
export function createMemoryStore(from?: StoreSnapshot): MemoryStore {
  const stored = new Map<string, StoredSession>()
  for (const saved of from?.sessions ?? []) {
    stored.set(saved.session, {
      envelopes: [...saved.envelopes],
      ids: new Map(saved.ids),
      cursors: new Map(saved.cursors),
      lastSeq: saved.lastSeq,
    })
  }
  const get = (session: string): StoredSession | undefined => stored.get(session)
  const ensure = (session: string): StoredSession => {
    let state = stored.get(session)
    if (state === undefined) {
      state = { envelopes: [], ids: new Map(), cursors: new Map(), lastSeq: 0 }
      stored.set(session, state)
    }
    return state
  }
  return {
    sessions: () => [...stored.keys()],
    append(session, envelope, key) {
      const state = ensure(session)
      state.envelopes.push(envelope)
      state.lastSeq = envelope.seq
      if (key !== undefined) state.ids.set(key, envelope.seq)
    },
    seqOf: (session, id) => get(session)?.ids.get(id),
    lastKeyed: (session, prefix) => lastKeyed(get(session)?.ids.keys() ?? [], prefix),
    read(session, after, max) {
      const envelopes = get(session)?.envelopes ?? []
      const start = firstAfter(envelopes, after)
      return envelopes.slice(start, start + max)
    },
    fold(session, seqs, digest) {
      const state = without(ensure(session), seqs)
      state.envelopes.push(digest)
      state.lastSeq = digest.seq
    },
    remove: (session, seqs) => void without(ensure(session), seqs),
    trim(session, through) {
      const state = get(session)
      if (state !== undefined) state.envelopes.splice(0, firstAfter(state.envelopes, through))
    },
    lastSeq: (session) => get(session)?.lastSeq ?? 0,
    cursor: (session, reader) => get(session)?.cursors.get(reader) ?? 0,
    setCursor: (session, reader, seq) => void ensure(session).cursors.set(reader, seq),
    drop: (session) => void stored.delete(session),
    snapshot: () => ({
      sessions: [...stored].map(([session, state]) => ({
        session,
        envelopes: [...state.envelopes],
        ids: [...state.ids],
        cursors: [...state.cursors],
        lastSeq: state.lastSeq,
      })),
    }),
  }
}

/** `state` with the envelopes of these seqs taken out. */
function without(state: StoredSession, seqs: readonly number[]): StoredSession {
  const gone = new Set(seqs)
  state.envelopes = state.envelopes.filter((envelope) => !gone.has(envelope.seq))
  return state
}

/** The index of the first envelope with seq greater than `after` (binary search: seqs increase). */
function firstAfter(envelopes: readonly Envelope[], after: number): number {
  let low = 0
  let high = envelopes.length
  while (low < high) {
    const middle = (low + high) >>> 1
    if (envelopes[middle]!.seq <= after) low = middle + 1
    else high = middle
  }
  return low
}

/** The greatest N of the ids `PREFIX<N>` among `ids` (0 for none). */
function lastKeyed(ids: Iterable<string>, prefix: string): number {
  let last = 0
  for (const id of ids) {
    if (!id.startsWith(prefix)) continue
    const n = Number(id.slice(prefix.length))
    if (Number.isSafeInteger(n) && n > last) last = n
  }
  return last
}
