import { errorFamily } from '@toolvisor/kernel'

/**
 * The state directory (or its `runs/`, or a directory above it) is not toolvisor's alone: owned by
 * another user, or writable by group or others (decision 0092). One code of the runtime's family:
 * `RuntimeError.is` of `@toolvisor/process-runtime` knows it, as when it was thrown there.
 */
export const STATE_DIR_ERROR = 'RUNTIME_ERR_STATE_DIR'

/** An error of the run state: a state directory that is not toolvisor's alone. */
export class RunStateError extends errorFamily<typeof STATE_DIR_ERROR>('runtime') {}
