import { createDecoder, type DecodeOptions, type EventValue } from './decode.js'
import { Ring } from './ring.js'
import type { SpillingOutput } from './spilling-output.js'

/** One event with its absolute position in everything the process produced (0-based). */
export interface SequencedEvent {
  readonly seq: number
  readonly value: EventValue
}

/** A page of events. */
export interface EventPage {
  readonly events: readonly SequencedEvent[]
  /** The position to ask for next. */
  readonly next: number
  /** Events between the position asked for and the first returned that could not be read back. */
  readonly elided: number
  /** Events produced so far. */
  readonly total: number
}

/** Index stride for line framings: one byte offset remembered every this many events. */
const STRIDE = 256
/** Bytes read from the spill file at a time when paging. */
const READ_BLOCK = 256 * 1024

/**
 * The events of one process: the most recent ones in a ring, and a sparse index of where each
 * block of events starts in stdout, so older ones are read back from the spill file by decoding
 * it again with the same rules (same framing, same schema, the ready line skipped).
 */
export class EventLog {
  readonly #ring: Ring<EventValue>
  /** Byte offset of event `i * stride`. */
  readonly #index: number[] = []
  readonly #stride: number
  readonly #decode: DecodeOptions
  readonly #stdout: SpillingOutput
  /** Byte offset in stdout of each event in the ring, by slot (seq modulo capacity). */
  readonly #offsets: Float64Array
  /** The most stdout bytes the ring may stand for; older events leave it early (still readable back). */
  readonly #maxBytes: number
  #readyOffset: number | undefined

  constructor(options: {
    readonly capacity: number
    readonly maxBytes: number
    readonly decode: DecodeOptions
    readonly stdout: SpillingOutput
  }) {
    this.#ring = new Ring(options.capacity)
    this.#offsets = new Float64Array(options.capacity)
    this.#maxBytes = options.maxBytes
    this.#decode = options.decode
    this.#stdout = options.stdout
    // Chunk boundaries cannot be found again by decoding: remember every one.
    this.#stride = options.decode.output.framing === 'chunks' ? 1 : STRIDE
  }

  /** Events produced so far. */
  get total(): number {
    return this.#ring.total
  }

  /** Position of the oldest event still in the ring. */
  get first(): number {
    return this.#ring.first
  }

  append(value: EventValue, offset: number): number {
    const ring = this.#ring
    const seq = ring.total
    if (seq % this.#stride === 0) this.#index.push(offset)
    ring.push(value)
    const capacity = ring.capacity
    const offsets = this.#offsets
    offsets[seq % capacity] = offset
    // Bound the ring by the bytes it stands for too: 256 big chunks must not hold 16 MiB. The
    // oldest slot is the next one to be overwritten, unless events already left early.
    if (offset - offsets[(seq + 1) % capacity]! > this.#maxBytes || this.#early) this.#bound(seq, offset)
    return seq
  }

  /** Set once events left the ring before its slots were reused (the byte bound kicked in). */
  #early = false

  #bound(seq: number, offset: number): void {
    const ring = this.#ring
    const capacity = ring.capacity
    let first = ring.first
    if (first >= seq) return
    while (first < seq && offset - this.#offsets[first % capacity]! > this.#maxBytes) first++
    if (first > ring.first) {
      ring.dropBefore(first)
      this.#early = true
    }
  }

  /** About how many stdout bytes the events in the ring stand for. */
  get heldBytes(): number {
    const ring = this.#ring
    if (ring.size === 0) return 0
    return this.#stdout.total - this.#offsets[ring.first % ring.capacity]!
  }

  /** Drops every event from memory: they stay readable back from the spill file. */
  compact(): void {
    this.#ring.dropBefore(this.#ring.total)
  }

  /** Remembers where the ready line was, so replays skip it. */
  markReady(offset: number): void {
    this.#readyOffset = offset
  }

  /** The last `n` events, oldest first (read back from the spill file when the ring let them go). */
  last(n: number): SequencedEvent[] {
    const total = this.#ring.total
    const count = Math.max(0, Math.min(n, total))
    return [...this.read(total - count, count).events]
  }

  /** Up to `max` events from position `from`: from the ring when it still holds them, else from the spill file. */
  read(from: number, max: number): EventPage {
    const total = this.#ring.total
    const start = Math.max(0, Math.min(from, total))
    const events: SequencedEvent[] = []
    let elided = 0
    let position = start
    if (position < this.#ring.first) {
      const replayed = this.#replay(position, Math.min(max, this.#ring.first - position))
      if (replayed.length === 0) {
        // Not readable back (no spill file): say how many are gone and continue with the ring.
        elided = this.#ring.first - position
        position = this.#ring.first
      } else {
        events.push(...replayed)
        position += replayed.length
      }
    }
    while (events.length < max && position < total) {
      events.push({ seq: position, value: this.#ring.at(position) })
      position++
    }
    return { events, next: position, elided, total }
  }

  #replay(from: number, max: number): SequencedEvent[] {
    const block = Math.floor(from / this.#stride)
    const startOffset = this.#index[block]
    if (startOffset === undefined || max <= 0) return []
    const out: SequencedEvent[] = []
    if (this.#stride === 1) {
      // chunks: event k spans [index[k], index[k+1]).
      for (let k = from; k < from + max; k++) {
        const begin = this.#index[k]
        const end = this.#index[k + 1] ?? this.#stdout.total
        if (begin === undefined) break
        const bytes = this.#stdout.read(begin, end - begin)
        if (bytes.length < end - begin) break
        out.push({ seq: k, value: bytes })
      }
      return out
    }
    let seq = block * this.#stride
    const decoder = createDecoder(
      { ...this.#decode, ready: undefined, readyOffset: this.#readyOffset ?? -1, startOffset },
      {
        event(value) {
          if (seq >= from && out.length < max) out.push({ seq, value })
          seq++
        },
      },
    )
    let offset = startOffset
    while (out.length < max && offset < this.#stdout.total) {
      const bytes = this.#stdout.read(offset, READ_BLOCK)
      if (bytes.length === 0) return []
      decoder.push(bytes)
      offset += bytes.length
    }
    if (out.length < max) decoder.end()
    return out
  }
}
