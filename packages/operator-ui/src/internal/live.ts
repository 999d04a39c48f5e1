import type { Sessions, TaskRegistry } from '@toolvisor/tasks'
import type { StateView } from '../snapshot.js'
import type { EventStream } from './sse.js'

/** How often the counters may go out (at most once a second). */
const COUNTERS_MS = 1000
/**
 * How often the hub looks for a lifecycle change no hook reports (a task added, a process that
 * became ready or is stopping), while a page is connected: such a change goes out at once.
 */
const LOOK_MS = 250

/**
 * The state stream of every connected page: the state at connect, then at once on a lifecycle
 * change (a session opened or closed, a task started, changed status or ended, an operator's
 * action) and otherwise at most once a second when a counter moved. Nothing runs while no page is
 * connected.
 */
export class StateHub {
  readonly #build: () => StateView
  readonly #tasks: TaskRegistry
  readonly #sessions: Sessions
  readonly #clients = new Set<EventStream>()
  readonly #unhook: Array<() => void>
  #timer: NodeJS.Timeout | undefined
  #soon: NodeJS.Immediate | undefined
  #shape = ''
  #sent = ''
  #sentAt = 0
  /** When the state was last built (sent or found unchanged). */
  #builtAt = 0

  constructor(build: () => StateView, tasks: TaskRegistry, sessions: Sessions) {
    this.#build = build
    this.#tasks = tasks
    this.#sessions = sessions
    const now = () => this.push()
    this.#unhook = [sessions.onOpen(now), sessions.onClose(now), tasks.onDone(now)]
  }

  /** Adds a page's stream: it gets the state at once, then every change. */
  add(stream: EventStream): void {
    this.#clients.add(stream)
    stream.onClose(() => {
      this.#clients.delete(stream)
      if (this.#clients.size === 0) this.#stop()
    })
    // The new page gets the state now; the others too when it changed since they got it.
    if (!this.#send(true)) stream.offer('state', this.#state(this.#build()))
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => this.#look(), LOOK_MS)
      this.#timer.unref()
    }
  }

  /** Sends the state to every page soon (once, however many changes come in this turn). */
  push(): void {
    if (this.#clients.size === 0 || this.#soon !== undefined) return
    this.#soon = setImmediate(() => {
      this.#soon = undefined
      this.#send(true)
    })
  }

  /** How many pages are connected. */
  get size(): number {
    return this.#clients.size
  }

  /** Ends every stream and unhooks from the registries. */
  close(): void {
    for (const unhook of this.#unhook) unhook()
    for (const client of [...this.#clients]) client.close()
    this.#stop()
  }

  #look(): void {
    const shape = shapeOf(this.#tasks, this.#sessions)
    if (shape !== this.#shape) this.#send(true)
    else if (Date.now() - this.#builtAt >= COUNTERS_MS) this.#send(false)
  }

  /** Sends the state to every page when it changed (true then); `now`: whatever the last send. */
  #send(now: boolean): boolean {
    if (!now && Date.now() - this.#sentAt < COUNTERS_MS) return false
    this.#shape = shapeOf(this.#tasks, this.#sessions)
    const state = this.#build()
    this.#builtAt = Date.now()
    const text = JSON.stringify(state)
    if (text === this.#sent) return false
    this.#sent = text
    this.#sentAt = Date.now()
    const message = this.#state(state)
    for (const client of this.#clients) client.offer('state', message)
    return true
  }

  #state(state: StateView): StateView & { readonly now: number } {
    return { ...state, now: Date.now() }
  }

  #stop(): void {
    clearInterval(this.#timer)
    this.#timer = undefined
    if (this.#soon !== undefined) clearImmediate(this.#soon)
    this.#soon = undefined
    this.#sent = ''
  }
}

/** What a lifecycle change changes: the open sessions, and every task with its status. */
function shapeOf(tasks: TaskRegistry, sessions: Sessions): string {
  const open = sessions.list().map((s) => s.id)
  const all = tasks.all().map((t) => `${t.owner ?? ''}/${t.id}:${t.lifecycle.status}`)
  return `${open.join(',')}|${all.join(',')}`
}
