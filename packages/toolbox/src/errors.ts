import { type CodeOf, errorFamily } from '@toolvisor/kernel'

/** Codes of the errors the toolbox throws, and of the load reports it writes. */
export const ToolboxErrorCodes = {
  /** A tool name is taken: by another tool, by a reserved tool (`help`, `processes`), or after the `.` → `__` mapping. */
  NAME_TAKEN: 'TOOLBOX_ERR_NAME_TAKEN',
  /** A tool name cannot be made provider-safe (`^[a-zA-Z0-9_-]{1,64}$` after `.` → `__`). */
  NOT_PROVIDER_SAFE: 'TOOLBOX_ERR_NOT_PROVIDER_SAFE',
  /** A toolbox directory does not exist or cannot be read. */
  TOOLBOX_UNREADABLE: 'TOOLBOX_ERR_TOOLBOX_UNREADABLE',
  /** `describe` failed: it could not start, timed out, exited non-zero or printed too much. */
  DESCRIBE_FAILED: 'TOOLBOX_ERR_DESCRIBE_FAILED',
  /** A tool path that is missing, not a regular file, or not executable by toolvisor. */
  NOT_EXECUTABLE: 'TOOLBOX_ERR_NOT_EXECUTABLE',
  /** A tool declares a process mode no registered handler runs (`service` needs `@toolvisor/tool-processes` composed). */
  UNSUPPORTED_MODE: 'TOOLBOX_ERR_UNSUPPORTED_MODE',
  /** A second handler registered for one process mode. */
  MODE_TAKEN: 'TOOLBOX_ERR_MODE_TAKEN',
  /** `processes output` of a process id that is neither a task nor a oneshot call this toolbox keeps. */
  UNKNOWN_PROCESS: 'TOOLBOX_ERR_UNKNOWN_PROCESS',
} as const

/** Codes of the load warnings the toolbox reports (the tool is served). */
export const ToolboxWarningCodes = {
  /** A warning of `describe`: a likely typo, an ignored field. */
  DESCRIBE: 'TOOLBOX_WARN_DESCRIBE',
} as const

/** A code of this package. */
export type ToolboxErrorCode = CodeOf<typeof ToolboxErrorCodes>

/** An error of the toolbox. */
export class ToolboxError extends errorFamily<ToolboxErrorCode>('toolbox') {}
