import { type CodeOf, errorFamily } from '@toolvisor/kernel'

/** Codes of the errors `tool-processes` throws (the tools themselves answer with `isError` results). */
export const ProcessesErrorCodes = {
  /** An event written to a service between two runs (`restarting`) or after it ended. */
  NOT_RUNNING: 'PROCESSES_ERR_NOT_RUNNING',
} as const

/** A code of this package. */
export type ProcessesErrorCode = CodeOf<typeof ProcessesErrorCodes>

/** An error of `tool-processes`; `ProcessesError.is(e)` works across copies. */
export class ProcessesError extends errorFamily<ProcessesErrorCode>('tool-processes') {}
