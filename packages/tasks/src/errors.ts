import { type CodeOf, errorFamily } from '@toolvisor/kernel'

/** Codes of the errors the task registry and the sessions service throw. */
export const TasksErrorCodes = {
  /** A task id that does not exist. */
  UNKNOWN_TASK: 'TASKS_ERR_UNKNOWN_TASK',
  /** A task lost when an earlier run died: it is listed, but has no process to read or signal. */
  TASK_LOST: 'TASKS_ERR_TASK_LOST',
  /** A task queued behind a cap (`deferred`), or cancelled before it started: no process to read. */
  TASK_PENDING: 'TASKS_ERR_TASK_PENDING',
  /** A chosen task id that is taken (nothing was started). */
  TASK_ID_TAKEN: 'TASKS_ERR_TASK_ID_TAKEN',
  /** A session touched another session's task. */
  FOREIGN_TASK: 'TASKS_ERR_FOREIGN_TASK',
  /** A session id that is not 1 to 128 characters of `A-Z a-z 0-9 . _ : @ -`. */
  BAD_SESSION_ID: 'TASKS_ERR_BAD_SESSION_ID',
  /** A session's working directory that is not an absolute path. */
  BAD_SESSION_CWD: 'TASKS_ERR_BAD_SESSION_CWD',
  /** Closing a session that is not open. */
  UNKNOWN_SESSION: 'TASKS_ERR_UNKNOWN_SESSION',
} as const

/** A code of this package. */
export type TasksErrorCode = CodeOf<typeof TasksErrorCodes>

/** An error of the task registry or the sessions service. */
export class TasksError extends errorFamily<TasksErrorCode>('tasks') {}
