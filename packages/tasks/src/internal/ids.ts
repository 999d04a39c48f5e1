/**
 * The ids the task registry makes: `<prefix><n>` (`t1`, `bash-1`), each prefix counted on its own,
 * past every id a task holds (a lost one too), so none collides (ruling 13, decision 0100).
 */
export class TaskIds {
  /** The last number each id prefix gave (`t` -> 3: `t3` was the last `t` id made). */
  readonly #counters = new Map<string, number>()

  /** The next id of `prefix` that `held` says no task holds. */
  next(prefix: string, held: (id: string) => boolean): string {
    let n = this.#counters.get(prefix) ?? 0
    let id: string
    do id = `${prefix}${++n}`
    while (held(id))
    this.#counters.set(prefix, n)
    return id
  }

  /** New ids of `id`'s prefix go past it (`t4`: the next `t` id is at least `t5`). */
  past(id: string): void {
    const [, prefix, n] = /^(\D+)(\d+)$/.exec(id) ?? []
    if (prefix !== undefined) this.#counters.set(prefix, Math.max(this.#counters.get(prefix) ?? 0, Number(n)))
  }
}
