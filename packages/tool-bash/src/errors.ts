import { type CodeOf, errorFamily } from '@toolvisor/kernel'

/** Codes of the errors tool-bash throws. Inside a tool call they become `Error: <message>` results. */
export const BashErrorCodes = {
  /** No bash executable: `bash` is not on the runtime's PATH, or the configured `bash` is missing. */
  NO_BASH: 'BASH_ERR_NO_BASH',
  /** A tool argument the tool cannot take: the message names it, what it expects and what it got. */
  INVALID_ARGUMENT: 'BASH_ERR_INVALID_ARGUMENT',
  /** The working directory of a call (its `workdir`, or its session's) is not a directory. */
  WORKDIR: 'BASH_ERR_WORKDIR',
  /** A task id that names a task of another kind (a stream call, a service), not a background shell. */
  NOT_BASH_TASK: 'BASH_ERR_NOT_BASH_TASK',
  /**
   * A sandbox mode the mechanism cannot honour (at start-up for the standing mode, in a call for a
   * wider one), or one configured with no mechanism: never run weaker than the mode says.
   */
  SANDBOX: 'BASH_ERR_SANDBOX',
  /** A background task past the session's cap (`maxTasksPerSession`): nothing was started. */
  TOO_MANY_TASKS: 'BASH_ERR_TOO_MANY_TASKS',
} as const

/** A code of this package. */
export type BashErrorCode = CodeOf<typeof BashErrorCodes>

/** An error of tool-bash. */
export class BashError extends errorFamily<BashErrorCode>('bash') {}
