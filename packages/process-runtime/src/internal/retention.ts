/** What the retention budget needs of a finished process: its output (`ProcessOutput`). */
export interface Retained {
  heldBytes(): number
  compact(): void
}

interface Entry {
  readonly ref: WeakRef<Retained>
  readonly bytes: number
}

/**
 * The memory budget of finished processes (`retainBytes`). Their events and output stay in memory
 * while the ones still referenced (by a task, a caller) hold less than the budget together; past
 * it, the oldest move to their spill files (still readable). The budget holds weak references
 * only: a finished process nobody refers to any more (a one-shot whose result was returned) is
 * freed by the garbage collector, whatever it held, so a long-lived runtime does not grow with
 * the number of calls it served.
 */
export class Retention {
  readonly #budget: number
  #entries: Entry[] = []
  #bytes = 0
  /** Entries since the dead ones were last dropped. */
  #sincePrune = 0

  constructor(budget: number) {
    this.#budget = budget
  }

  add(process: Retained): void {
    const bytes = process.heldBytes()
    this.#entries.push({ ref: new WeakRef(process), bytes })
    this.#bytes += bytes
    if (++this.#sincePrune >= 1024) this.#prune()
    while (this.#bytes > this.#budget && this.#entries.length > 0) {
      const oldest = this.#entries.shift()!
      this.#bytes -= oldest.bytes
      oldest.ref.deref()?.compact()
    }
  }

  /** Forgets the processes the garbage collector took (their memory is gone already). */
  #prune(): void {
    this.#sincePrune = 0
    this.#entries = this.#entries.filter((entry) => {
      if (entry.ref.deref() !== undefined) return true
      this.#bytes -= entry.bytes
      return false
    })
  }
}
