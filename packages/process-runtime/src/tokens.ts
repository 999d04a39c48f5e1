import { token } from '@toolvisor/kernel'
import type { Launchers } from './launchers.js'
import type { TaskRegistry } from './tasks.js'
import type { ProcessRuntime } from './types.js'

/** The `launchers` token: the registry of sandbox and run_as mechanisms. */
export const LaunchersToken = token<Launchers>('launchers')

/** The `runtime` token: launches and tracks tool processes. */
export const RuntimeToken = token<ProcessRuntime>('runtime')

/** The `tasks` token: the one registry of long-running tasks. */
export const TasksToken = token<TaskRegistry>('tasks')
