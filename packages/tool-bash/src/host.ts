import { token } from '@toolvisor/kernel'
import type { TaskInfo, TaskRegistry } from '@toolvisor/tasks'
import { BashError } from './errors.js'
import { stopped } from './internal/render.js'

/** One background shell as a host sees it (seed 004's `BackgroundShellInfo`). */
export interface BackgroundShellInfo {
  /** Its task id. */
  readonly id: string
  readonly command: string
  readonly started: Date
  readonly running: boolean
  /** Once it ended: its exit code, -1 when a signal ended it; `null` while it runs. */
  readonly exitCode: number | null
  /** Stopped on purpose: a kill, its session's close, `closeAll`, the runtime's shutdown, a restart. */
  readonly killed: boolean
  /** The session that owns it (absent: started with no session). */
  readonly owner?: string
}

/**
 * What a host does with background shells (seed 004's `BackgroundShells`): list, kill, close all.
 * A thin view of the task registry: every shell is a task of kind `bash`, fenced like any task.
 */
export interface BashHost {
  /** The background shells of `session` (and those with no owner); without a session, every one. Oldest first. */
  list(session?: string): BackgroundShellInfo[]
  /**
   * Stops one (its declared stop signal to the group and what left it, the grace, SIGKILL) and
   * resolves once it is gone; at once when it had ended. With `session`, another session's shell
   * is refused (`task <id> belongs to another session`); an unknown id rejects.
   */
  kill(id: string, session?: string): Promise<void>
  /** Stops every running background shell of `session`, or every one when no session is given. */
  closeAll(session?: string): Promise<void>
}

/** The `bash` token: the host's view of background shells, provided by `bashPlugin`. */
export const BashToken = token<BashHost>('bash')

/** The host view over `tasks`. */
export function createBashHost(tasks: TaskRegistry): BashHost {
  const shells = (session: string | undefined) =>
    (session === undefined ? tasks.all() : tasks.list(session)).filter((task) => task.kind === 'bash')
  return {
    list: (session) => shells(session).map(shellInfo),
    async kill(id, session) {
      const owner = session ?? tasks.all().find((task) => task.id === id)?.owner
      const task = tasks.get(id, owner)
      if (task.kind !== 'bash') {
        throw new BashError(
          'BASH_ERR_NOT_BASH_TASK',
          `task ${id} is a ${task.kind} task, not a background shell`,
        )
      }
      if (task.exit === undefined) await tasks.cancel(id, owner)
    },
    closeAll: (session) => stopShells(tasks, (task) => session === undefined || task.owner === session),
  }
}

function shellInfo(task: TaskInfo): BackgroundShellInfo {
  const exit = task.exit
  return {
    id: task.id,
    command: task.label ?? '',
    started: task.startedAt,
    running: exit === undefined,
    exitCode: exit === undefined ? null : (exit.code ?? -1),
    killed: exit !== undefined && stopped(exit),
    ...(task.owner !== undefined ? { owner: task.owner } : {}),
  }
}

/** Stops every running background shell `which` picks (its declared stop), resolving once all are gone. */
export async function stopShells(tasks: TaskRegistry, which: (task: TaskInfo) => boolean): Promise<void> {
  const running = tasks.all().filter((task) => task.kind === 'bash' && task.exit === undefined && which(task))
  await Promise.all(running.map((task) => tasks.cancel(task.id, task.owner)))
}

/** The shells a shutdown stops: every one, or with a runtime that keeps (decision 0113) all but the kept. */
export function stoppedAtShutdown(tasks: TaskRegistry, keeps: boolean): (task: TaskInfo) => boolean {
  return (task) => !(keeps && task.process !== undefined && tasks.process(task.id, task.owner).kept)
}
