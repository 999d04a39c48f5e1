import { definePlugin } from '@toolvisor/kernel'
import { RuntimeToken } from '@toolvisor/process-runtime'
import { createTaskRegistry } from './registry.js'
import { createSessions, stopOwnedTasks } from './sessions.js'
import { SessionsToken, TasksToken } from './tokens.js'

/**
 * Tasks and sessions as a kernel plugin: provides the `tasks` registry over the runtime (with the
 * tasks a previous run lost) and the `sessions` service, whose close stops every task the session
 * owns with its declared cancel.
 */
export const tasksPlugin = definePlugin({
  name: 'tasks',
  inject: { runtime: RuntimeToken },
  provides: [TasksToken, SessionsToken],
  apply(ctx) {
    const tasks = createTaskRegistry(ctx.deps.runtime)
    const sessions = createSessions()
    sessions.onClose((session) => stopOwnedTasks(tasks, session.id))
    ctx.provide(TasksToken, tasks)
    ctx.provide(SessionsToken, sessions)
  },
})
