import type { NotifySender } from './transport.js'

/** One keyed item as the harness receives it (decision 0051; docs/guides/operating.md). */
export interface NotifyItem {
  /** The wire format's version. */
  readonly v: 1
  /** The task id: every item of a task has it, a later one replaces the earlier. */
  readonly key: string
  /** `set`: show (or replace) the item; `clear`: remove it, its news reached the model inline. */
  readonly op: 'set' | 'clear'
  /** For `set`: `running` (it outlived the call that started it) or `done` (with `summary`). */
  readonly state?: 'running' | 'done'
  /** The owner session (its id or name), or null for a task of no session. */
  readonly session: string | null
  /** What the task is, for `set`. */
  readonly task?: {
    readonly kind: string
    readonly tool: string
    readonly label?: string
    readonly startedAt: string
  }
  /** For `done`: one line (`bash (sleep 1; echo hi): exited (0)`). */
  readonly summary?: string
  /** Increases with each item this daemon makes: a harness may ignore one older than what it has. */
  readonly seq: number
  /** When the item was made (ISO time). */
  readonly at: string
}

/** The bounds of the queue. */
export interface QueueOptions {
  readonly sender: NotifySender
  /** Items waiting at most; past it the oldest is dropped. */
  readonly capacity: number
  /** Tries per item before it is dropped. */
  readonly attempts: number
  /** The wait after the first failed try; doubled after each, at most 5 s. */
  readonly backoffMs: number
  /** One line per dropped item. */
  readonly log: (line: string) => void
}

const MAX_BACKOFF_MS = 5000

/**
 * The items on their way to the harness, one key one slot: an item for a key that is still waiting
 * replaces the waiting one where it stands (the harness gets the newest state, never both). Sent
 * one at a time, in order; a try that fails is repeated after a backoff, at most `attempts` times,
 * then the item is dropped with one log line. Nothing here ever blocks the caller of `put`.
 */
export class NotifyQueue {
  readonly #options: QueueOptions
  readonly #waiting = new Map<string, NotifyItem>()
  #running = false
  #idle: Array<() => void> = []

  constructor(options: QueueOptions) {
    this.#options = options
  }

  /** How many items wait. */
  get size(): number {
    return this.#waiting.size
  }

  put(item: NotifyItem): void {
    if (!this.#waiting.has(item.key) && this.#waiting.size >= this.#options.capacity) {
      const [oldest] = this.#waiting.values()
      if (oldest !== undefined) this.#drop(oldest, `the queue holds ${this.#options.capacity} items`)
    }
    this.#waiting.set(item.key, item)
    if (!this.#running) void this.#run()
  }

  /** Resolves once nothing waits, or after `ms`. */
  drained(ms: number): Promise<void> {
    if (this.#waiting.size === 0) return Promise.resolve()
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms)
      this.#idle.push(() => {
        clearTimeout(timer)
        resolve()
      })
    })
  }

  async #run(): Promise<void> {
    this.#running = true
    // The first waiting key each time: a key put again meanwhile keeps its place.
    for (let next = this.#waiting.keys().next(); !next.done; next = this.#waiting.keys().next()) {
      await this.#deliver(next.value)
    }
    this.#running = false
    for (const resolve of this.#idle.splice(0)) resolve()
  }

  /** Sends the newest item of `key` until one try succeeds or the tries run out. */
  async #deliver(key: string): Promise<void> {
    let error: unknown
    for (let attempt = 1; attempt <= this.#options.attempts; attempt++) {
      const item = this.#waiting.get(key)
      if (item === undefined) return // dropped meanwhile
      try {
        await this.#options.sender.send(JSON.stringify(item))
        // A newer item of the key came while this one was on its way: it goes next.
        if (this.#waiting.get(key) === item) this.#waiting.delete(key)
        return
      } catch (caught) {
        error = caught
      }
      if (attempt < this.#options.attempts) await pause(backoff(this.#options.backoffMs, attempt))
    }
    const item = this.#waiting.get(key)
    if (item !== undefined) this.#drop(item, `${this.#options.attempts} tries failed: ${messageOf(error)}`)
  }

  #drop(item: NotifyItem, why: string): void {
    this.#waiting.delete(item.key)
    const what = item.op === 'clear' ? 'clear' : item.state
    this.#options.log(`toolvisor: notify: dropped the ${what} item of ${item.key} (seq ${item.seq}): ${why}`)
  }
}

function backoff(base: number, attempt: number): number {
  return Math.min(MAX_BACKOFF_MS, base * 2 ** (attempt - 1))
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref())
}

/** `ENOENT`, `ECONNREFUSED`, `HTTP 503`, `TimeoutError: ...`: what a log line says of a failed try. */
function messageOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  const code =
    (error as NodeJS.ErrnoException).code ?? (error.cause as NodeJS.ErrnoException | undefined)?.code
  if (typeof code === 'string') return code
  return error.name === 'Error' ? error.message : `${error.name}: ${error.message}`
}
