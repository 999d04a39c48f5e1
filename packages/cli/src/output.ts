import { visibleText } from '@toolvisor/answers'
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

/**
 * Text that quotes a tool, a model or a client, as the operator's terminal gets it: the control
 * codes, bidi, zero-width and tag characters of `visibleText` written as `\uXXXX`, and every line
 * after the first indented by `indent`, so that quoted text can never start a line that looks
 * like toolvisor's own (a forged report row, a forged log line). Decision 0093.
 */
export function human(text: string, indent = '  '): string {
  return visibleText(text).replaceAll('\n', `\n${indent}`)
}

/** A log line for stderr (`serve`, `mcp`, the bridge): `human`, then the newline. */
export function logTo(io: Io): (line: string) => void {
  return (line) => io.err(`${human(line)}\n`)
}
