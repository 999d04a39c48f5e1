import type { ManagedProcess } from '@toolvisor/process-runtime'
import { type AddTaskOptions, type TaskInfo, type TaskRegistry, TasksError } from '@toolvisor/tasks'

/**
 * Service handles, `p1`, `p2`, ... per session (ruling 13): each start takes the session's next
 * number whose id no task holds (another session's `p1`, a `p1` lost by an earlier run), so a
 * handle is never reused within a session. The registry secures the id before anything starts.
 */
export class Handles {
  readonly #next = new Map<string, number>()
  readonly #tasks: TaskRegistry

  constructor(tasks: TaskRegistry) {
    this.#tasks = tasks
  }

  /**
   * Registers a task of `session` under its next free handle; `start` gets the handle and runs
   * once the registry secured it.
   */
  add(
    session: string,
    task: Pick<AddTaskOptions, 'kind' | 'tool' | 'label'>,
    start: (handle: string) => ManagedProcess,
  ): TaskInfo {
    for (;;) {
      const n = (this.#next.get(session) ?? 0) + 1
      this.#next.set(session, n)
      const id = `p${n}`
      try {
        return this.#tasks.add({ ...task, owner: session, id, start: () => start(id) })
      } catch (error) {
        if (!TasksError.is(error) || error.code !== 'TASKS_ERR_TASK_ID_TAKEN') throw error
      }
    }
  }

  /**
   * Registers a task of `session` under `handle` as it was before a restart (a re-adopted kept
   * service, decision 0113); the numbering goes on past it.
   */
  adopt(
    session: string,
    handle: string,
    task: Pick<AddTaskOptions, 'kind' | 'tool' | 'label'> & {
      readonly cursors?: Readonly<Record<string, number>>
    },
    start: () => ManagedProcess,
  ): TaskInfo {
    const n = Number(handle.slice(1))
    if (Number.isSafeInteger(n) && n > (this.#next.get(session) ?? 0)) this.#next.set(session, n)
    return this.#tasks.add({ ...task, owner: session, id: handle, start })
  }

  /** Forgets a closed session's numbering. */
  forget(session: string): void {
    this.#next.delete(session)
  }
}
