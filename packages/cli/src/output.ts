import { KernelError, ToolvisorError } from '@toolvisor/kernel'

/** Where a command writes: stdout for results, stderr for everything else. */
export interface Io {
  out(text: string): void
  err(text: string): void
}

/** The process's own stdout and stderr. */
export const processIo: Io = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
}

/**
 * What to print for an error: the innermost message that says what went wrong (a plugin failure
 * wraps the LoadingError or config error that caused it).
 */
export function explain(error: unknown): string {
  let current: unknown = error
  while (
    KernelError.is(current) &&
    current.code === 'KERNEL_ERR_PLUGIN_FAILED' &&
    current.cause !== undefined
  ) {
    current = current.cause
  }
  if (ToolvisorError.is(current) || current instanceof Error) return current.message
  return String(current)
}
