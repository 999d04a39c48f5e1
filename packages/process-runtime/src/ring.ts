/** A fixed-capacity ring that remembers how many items went through it. */
export class Ring<T> {
  readonly #items: (T | undefined)[]
  #next = 0
  #total = 0

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
    return Math.min(this.#total, this.capacity)
  }

  /** Index (in push order, from 0) of the oldest item held. */
  get first(): number {
    return this.#total - this.size
  }

  push(item: T): void {
    this.#items[this.#next] = item
    this.#next = (this.#next + 1) % this.capacity
    this.#total++
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
