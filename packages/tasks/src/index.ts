export { LOST_ON_RESTART } from './entry.js'
export type { TasksErrorCode } from './errors.js'
export { TasksError, TasksErrorCodes } from './errors.js'
export { tasksPlugin } from './plugin.js'
export type { RegistryRuntime } from './registry.js'
export { createTaskRegistry, foreignTask } from './registry.js'
export type {
  CloseHook,
  CloseReason,
  OpenHook,
  OpenSession,
  SessionCall,
  SessionFacts,
  SessionInfo,
  Sessions,
} from './sessions.js'
export { createSessions, ensureSession, stopOwnedTasks } from './sessions.js'
export { SessionsToken, TasksToken } from './tokens.js'
export type * from './types.js'
