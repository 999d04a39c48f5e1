import { type CodeOf, errorFamily } from '@toolvisor/kernel'

/** Codes of the errors the process runtime throws (load-time ones are LoadingErrors with these codes). */
export const RuntimeErrorCodes = {
  /** Two mechanisms registered under one name. */
  DUPLICATE_MECHANISM: 'RUNTIME_ERR_DUPLICATE_MECHANISM',
  /** `envdir` declared but no envdir root configured, or the directory is missing. */
  ENVDIR: 'RUNTIME_ERR_ENVDIR',
  /** `run_as` declared but no run_as mechanism configured, or the user cannot be switched to. */
  RUN_AS: 'RUNTIME_ERR_RUN_AS',
  /** `sandbox` declared but no mechanism configured, or no mechanism honours a field. */
  SANDBOX: 'RUNTIME_ERR_SANDBOX',
  /** A declared sandbox path is missing, or a symlink leads outside what was declared. */
  SANDBOX_PATH: 'RUNTIME_ERR_SANDBOX_PATH',
  /** A grant reaches toolvisor's own paths: its state, a secret of its own, or its installation. */
  OWN_PATH: 'RUNTIME_ERR_OWN_PATH',
  /** A protected path in a writable grant is a link, a FIFO, a socket or a device: it cannot be kept. */
  PROTECTED_PATH: 'RUNTIME_ERR_PROTECTED_PATH',
  /** A start's working directory lies outside what the sandbox grants. */
  CWD: 'RUNTIME_ERR_CWD',
  /** `rundir` cannot be created or escapes the tool's directory. */
  RUNDIR: 'RUNTIME_ERR_RUNDIR',
  /** A declared limit is above the operator's ceiling, or nothing here can enforce it (decision 0097). */
  LIMIT: 'RUNTIME_ERR_LIMIT',
  /** The process could not be spawned (missing executable, permission). */
  SPAWN_FAILED: 'RUNTIME_ERR_SPAWN_FAILED',
  /** A granted path is no longer what was qualified at load (replaced, swapped for a symlink, a FIFO, a device). */
  GRANT_CHANGED: 'RUNTIME_ERR_GRANT_CHANGED',
  /** A launch got no word of its exec within the fork server's deadline (it was killed; nothing else waited). */
  LAUNCH_TIMEOUT: 'RUNTIME_ERR_LAUNCH_TIMEOUT',
  /** The user a tool runs as cannot reach what it declared (its directory, executable, fs grants). */
  ACCESS: 'RUNTIME_ERR_ACCESS',
  /** The sandbox user does not exist. */
  SANDBOX_USER: 'RUNTIME_ERR_SANDBOX_USER',
  /** The final-exec helper (toolvisor-exec) was not built, so sandboxed and run_as tools cannot start. */
  EXEC_HELPER: 'RUNTIME_ERR_EXEC_HELPER',
  /** `describe`/`help` cannot be run under the confining policy a configured mechanism asks for. */
  CONFINE: 'RUNTIME_ERR_CONFINE',
  /** The process did not become ready within `timeout.start`, or exited before ready. */
  NOT_READY: 'RUNTIME_ERR_NOT_READY',
  /** An event sent to a process does not match its declared `input.event`. */
  INVALID_INPUT: 'RUNTIME_ERR_INVALID_INPUT',
  /** Writing to a process whose stdin is closed or was never open. */
  STDIN_CLOSED: 'RUNTIME_ERR_STDIN_CLOSED',
  /** The runtime was disposed. */
  DISPOSED: 'RUNTIME_ERR_DISPOSED',
  /**
   * The state directory (or its `runs/`, or a directory above it) is not toolvisor's alone: owned by
   * another user, or writable by group or others (decision 0092).
   */
  STATE_DIR: 'RUNTIME_ERR_STATE_DIR',
  /** The envdir root may be read or written by group or others, and `envdirPermissions` is `refuse`. */
  ENVDIR_PERMISSIONS: 'RUNTIME_ERR_ENVDIR_PERMISSIONS',
  /** A tool's `run_as` names a user (or group) the operator's `runAsAllow` does not allow. */
  RUN_AS_NOT_ALLOWED: 'RUNTIME_ERR_RUN_AS_NOT_ALLOWED',
} as const

/** A code of this package. */
export type RuntimeErrorCode = CodeOf<typeof RuntimeErrorCodes>

/** An error of the process runtime. */
export class RuntimeError extends errorFamily<RuntimeErrorCode>('runtime') {}
