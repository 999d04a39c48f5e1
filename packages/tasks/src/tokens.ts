import { token } from '@toolvisor/kernel'
import type { Sessions } from './sessions.js'
import type { TaskRegistry } from './types.js'

/** The `tasks` token: the one registry of long-running tasks. */
export const TasksToken = token<TaskRegistry>('tasks')

/** The `sessions` token: who owns calls, tasks and mail; surfaces open and close sessions here. */
export const SessionsToken = token<Sessions>('sessions')
