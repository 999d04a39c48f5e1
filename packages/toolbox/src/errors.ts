import { ToolvisorError } from '@toolvisor/kernel'

/** Codes of the errors the toolbox throws. */
export const ToolboxErrorCodes = {
  /** A tool name is taken, or collides with another after the provider-safe mapping. */
  NAME_TAKEN: 'TOOLBOX_ERR_NAME_TAKEN',
  /** A toolbox directory does not exist or cannot be read. */
  TOOLBOX_UNREADABLE: 'TOOLBOX_ERR_TOOLBOX_UNREADABLE',
  /** `describe` failed: it could not start, timed out, exited non-zero or printed too much. */
  DESCRIBE_FAILED: 'TOOLBOX_ERR_DESCRIBE_FAILED',
  /** A regular file in a toolbox that is not executable. */
  NOT_EXECUTABLE: 'TOOLBOX_ERR_NOT_EXECUTABLE',
  /** A tool declares a process mode this toolbox does not run (`service` needs tool-processes). */
  UNSUPPORTED_MODE: 'TOOLBOX_ERR_UNSUPPORTED_MODE',
  /** A session id that is not 1 to 128 characters of `A-Z a-z 0-9 . _ : @ -`. */
  BAD_SESSION_ID: 'TOOLBOX_ERR_BAD_SESSION_ID',
  /** Closing a session that is not open. */
  UNKNOWN_SESSION: 'TOOLBOX_ERR_UNKNOWN_SESSION',
} as const

/** A code of this package. */
export type ToolboxErrorCode = (typeof ToolboxErrorCodes)[keyof typeof ToolboxErrorCodes]

/** An error of the toolbox. */
export class ToolboxError extends ToolvisorError<ToolboxErrorCode> {
  static override readonly family = 'toolbox'
}
