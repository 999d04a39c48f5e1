/**
 * The cap on a session's background tasks (`maxTasksPerSession`, decision 0105) and hyperhive's
 * queue behind it: a task past the cap waits as `pending` (seed 002), registered `deferred`, and
 * starts when one of its session's tasks ends, oldest first; `kill` cancels it before it starts.
 */

import type { TaskInfo, TaskRegistry } from '@toolvisor/tasks'
import { BashError } from '../errors.js'

export class TaskCap {
  readonly #tasks: TaskRegistry
  readonly #cap: number
  /** Pending task ids by session, oldest first. */
  readonly #queued = new Map<string, string[]>()

  constructor(tasks: TaskRegistry, cap: number) {
    this.#tasks = tasks
    this.#cap = cap
  }

  /** How many background tasks of `session` run now (started, not ended). */
  running(session: string | undefined): number {
    const live = (task: TaskInfo) =>
      task.kind === 'bash' && task.exit === undefined && task.lifecycle.status !== 'pending'
    return this.#tasks.list(session).filter((task) => task.owner === session && live(task)).length
  }

  /** Whether a new task of `session` may start now; a task with no session is never capped. */
  admits(session: string | undefined): boolean {
    return session === undefined || this.running(session) < this.#cap
  }

  /** The cap, for messages. */
  get cap(): number {
    return this.#cap
  }

  /** Queues a `deferred` task of `session`: it starts when the session has room. */
  queue(session: string, id: string): void {
    this.#queued.set(session, [...(this.#queued.get(session) ?? []), id])
  }

  /**
   * Starts what the session's queue holds while it has room (called when one of its tasks ended);
   * an id cancelled meanwhile is skipped (`begin` finds nothing to start).
   */
  drain(session: string): void {
    const queue = this.#queued.get(session)
    while (queue !== undefined && queue.length > 0 && this.running(session) < this.#cap) {
      this.#tasks.begin(queue.shift()!)
    }
    if (queue?.length === 0) this.#queued.delete(session)
  }

  /** Starts the queues of sessions whose tasks end; returns the unsubscription. */
  follow(): () => void {
    return this.#tasks.onDone(({ task }) => {
      if (task.kind === 'bash' && task.owner !== undefined) this.drain(task.owner)
    })
  }
}

/**
 * Refuses a background task past the session's cap (`maxTasksPerSession`, decision 0105), saying
 * how to make room; nothing is started. hyperhive queues instead (`TaskCap`).
 */
export function refuseOverCap(caps: TaskCap, session: string | undefined): void {
  if (caps.admits(session)) return
  const { cap } = caps
  throw new BashError(
    'BASH_ERR_TOO_MANY_TASKS',
    `this session already runs ${cap} background tasks, as many as it may (bash.maxTasksPerSession): wait for one to end or stop one; nothing was started`,
  )
}
