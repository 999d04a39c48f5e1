import { visibleText } from '@toolvisor/answers'

/**
 * The default log: one line to stderr, its control codes, bidi, zero-width and tag characters
 * escaped (log lines quote tool names, client-supplied ids and protocol errors; decision 0093).
 */
export function stderrLog(line: string): void {
  process.stderr.write(`${visibleText(line)}\n`)
}
