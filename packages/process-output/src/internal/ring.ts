/** A fixed-capacity ring that remembers how many items went through it. */
export class Ring<T> {
  readonly #items: (T | undefined)[]
  #next = 0
  #total = 0
  /** Items below this index were dropped early (a byte bound, or a compaction). */
  #floor = 0

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError(`ring capacity must be >= 1, got ${capacity}`)
    this.#items = new Array<T | undefined>(capacity)
  }

  /** Items ever pushed. */
  get total(): number {
    return this.#total
  }

  /** Items held now. */
  get size(): number {
    return this.#total - this.first
  }

  /** Index (in push order, from 0) of the oldest item held. */
  get first(): number {
    return Math.max(this.#total - this.capacity, this.#floor)
  }

  push(item: T): void {
    this.#items[this.#next] = item
    this.#next = (this.#next + 1) % this.capacity
    this.#total++
  }

  /** Drops every item older than `index` (their slots are freed at once). */
  dropBefore(index: number): void {
    const until = Math.min(index, this.#total)
    for (let i = this.first; i < until; i++) this.#items[i % this.capacity] = undefined
    this.#floor = Math.max(this.#floor, until)
  }

  /** The item pushed as number `index` (0-based), if still held. */
  at(index: number): T | undefined {
    if (index < this.first || index >= this.#total) return undefined
    return this.#items[index % this.capacity]
  }

  /** The last `n` items, oldest first. */
  last(n: number): T[] {
    const count = Math.max(0, Math.min(n, this.size))
    const out: T[] = []
    for (let i = this.#total - count; i < this.#total; i++) out.push(this.#items[i % this.capacity] as T)
    return out
  }
}
