import type { EnvelopeKind } from '../envelope.js'

/** The per-envelope size bound: the most bytes of JSON (as an array) and the most events one body holds. */
export interface BodyBound {
  readonly bytes: number
  readonly events: number
}

/** What a batch turns into: the kind, body and accounting of one envelope. */
export interface BatchContents {
  readonly kind: Extract<EnvelopeKind, 'event' | 'digest'>
  readonly body: unknown
  readonly events: number
  readonly omitted: number
}

/** The JSON size of an event in bytes (`undefined`, which JSON cannot hold, counts as `null`). */
export function sizeOf(event: unknown): number {
  return Buffer.byteLength(JSON.stringify(event) ?? 'null')
}

/**
 * The events of one envelope in the making. It keeps the newest events that fit the bound and
 * counts every other one as omitted, so its memory never exceeds the bound whatever comes in.
 */
export class Batch {
  readonly #bound: BodyBound
  #kept: unknown[] = []
  #sizes: number[] = []
  /** Index of the oldest kept event: dropping from the front moves it instead of shifting. */
  #head = 0
  #bytes = 0
  #events = 0
  #omitted = 0

  constructor(bound: BodyBound) {
    this.#bound = bound
  }

  /** Events given since the batch was last taken, kept or omitted. */
  get events(): number {
    return this.#events
  }

  /** The size of the kept events as a JSON array (0 when none is kept): never over the bound. */
  get bytes(): number {
    return this.#bytes === 0 ? 0 : this.#bytes + 1
  }

  /** Takes one event. */
  add(event: unknown): void {
    this.#events += 1
    // Each event costs its JSON and one byte for the comma or bracket after it; with the opening
    // bracket, the kept events' JSON array is exactly `#bytes + 1` bytes.
    const cost = sizeOf(event) + 1
    // An event larger than the whole bound could only fit by emptying the body: count it instead.
    if (cost + 1 > this.#bound.bytes) {
      this.#omitted += 1
      return
    }
    this.#kept.push(event)
    this.#sizes.push(cost)
    this.#bytes += cost
    while (this.#bytes + 1 > this.#bound.bytes || this.#kept.length - this.#head > this.#bound.events) {
      this.#bytes -= this.#sizes[this.#head]!
      this.#head += 1
      this.#omitted += 1
    }
    // Compact once the dropped prefix dominates, so a long burst costs O(1) per event.
    if (this.#head > 64 && this.#head * 2 > this.#kept.length) {
      this.#kept = this.#kept.slice(this.#head)
      this.#sizes = this.#sizes.slice(this.#head)
      this.#head = 0
    }
  }

  /** Counts `n` events that were already left out of a body (when folding a digest). */
  addOmitted(n: number): void {
    this.#events += n
    this.#omitted += n
  }

  /**
   * Empties the batch into one envelope's contents: one event kept and nothing omitted is an
   * `event` whose body is the event itself; anything else is a `digest` with an array body.
   */
  take(): BatchContents {
    const body = this.#kept.slice(this.#head)
    const contents: BatchContents =
      this.#events === 1 && this.#omitted === 0
        ? { kind: 'event', body: body[0], events: 1, omitted: 0 }
        : { kind: 'digest', body, events: this.#events, omitted: this.#omitted }
    this.#kept = []
    this.#sizes = []
    this.#head = 0
    this.#bytes = 0
    this.#events = 0
    this.#omitted = 0
    return contents
  }
}

/** The contents of an envelope for one posted event: itself, or counted as omitted if too large. */
export function oneEvent(event: unknown, bound: BodyBound): BatchContents {
  const batch = new Batch(bound)
  batch.add(event)
  return batch.take()
}
