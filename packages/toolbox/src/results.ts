import type { ToolSpec } from '@toolvisor/describe-v2'
import type { CapturedOutput, ManagedProcess, ProcessExit, SequencedEvent } from '@toolvisor/process-runtime'
import type { ToolResult } from './types.js'

/** Bytes of the end of stdout and stderr shown in an error result (ruling 4). */
export const ERROR_TAIL_BYTES = 4096

/** A text result. */
export function text(value: string, isError = false, meta?: Record<string, unknown>): ToolResult {
  return {
    content: value.length > 0 ? [{ type: 'text', text: value }] : [],
    isError,
    ...(meta ? { meta } : {}),
  }
}

/** How an exit reads in a sentence: `exit code 3`, `killed by SIGKILL`, `cancelled`, ... */
export function describeExit(exit: ProcessExit): string {
  if (exit.status === 'failed') return exit.why ?? 'failed'
  const how = exit.code !== null ? `exit code ${exit.code}` : `killed by ${exit.signal}`
  switch (exit.reason) {
    case 'cancelled':
      return `cancelled (${how})`
    case 'timeout':
      return `timed out (${how})`
    case 'idle':
      return `stopped after being idle (${how})`
    case 'runtime-disposed':
      return `stopped because the runtime shut down (${how})`
    default:
      return how
  }
}

/** True when the process ran to a clean end. */
export function succeeded(exit: ProcessExit): boolean {
  return exit.status === 'exited' && exit.code === 0 && exit.reason === 'exit'
}

/** Facts for the host about how a process ended (never shown to the model as such). */
export function exitMeta(process: ManagedProcess, exit: ProcessExit): Record<string, unknown> {
  const stdout = process.stdout()
  const stderr = process.stderr()
  return {
    process: process.id,
    exitCode: exit.code,
    signal: exit.signal,
    reason: exit.reason,
    stdoutBytes: stdout.totalBytes,
    stderrBytes: stderr.totalBytes,
    ...(stdout.spillPath ? { stdoutSpill: stdout.spillPath } : {}),
    ...(stderr.spillPath ? { stderrSpill: stderr.spillPath } : {}),
  }
}

/**
 * The error result of a run that did not succeed (ruling 4): what happened, then bounded tails of
 * both stdout and stderr (many tools print their error on stdout).
 */
export function failure(tool: string, process: ManagedProcess, exit: ProcessExit, prefix = ''): ToolResult {
  const parts = [`${prefix}${tool} failed: ${describeExit(exit)}`]
  const section = (name: string, output: CapturedOutput) => {
    if (output.totalBytes === 0) return
    const tail = output.tail.subarray(Math.max(0, output.tail.length - ERROR_TAIL_BYTES))
    const cut = output.totalBytes > tail.length ? ` (last ${tail.length} of ${output.totalBytes} bytes)` : ''
    parts.push(`--- ${name}${cut} ---\n${tail.toString('utf8').replace(/\n$/, '')}`)
  }
  section('stdout', process.stdout())
  section('stderr', process.stderr())
  return text(parts.join('\n'), true, exitMeta(process, exit))
}

/** The note appended when a result does not hold everything. */
export function truncationNote(shown: string, output: CapturedOutput): string {
  const where = output.spillPath ? `; every byte is in ${output.spillPath}` : ''
  return `[output truncated: ${shown} of ${output.totalBytes} bytes${where}]`
}

/** Renders stdout as the model reads it: text when it is UTF-8, else base64 with a header. */
export function stdoutText(bytes: Buffer): string {
  const decoded = bytes.toString('utf8')
  if (!decoded.includes('\uFFFD') || Buffer.from(decoded, 'utf8').equals(bytes)) return decoded
  return `[binary output, ${bytes.length} bytes, base64]\n${bytes.toString('base64')}`
}

/** A one-line rendering of an event, for progress messages. */
export function eventLine(event: SequencedEvent): string {
  const value = event.value
  const line = Buffer.isBuffer(value)
    ? value.toString('utf8')
    : typeof value === 'string'
      ? value
      : JSON.stringify(value)
  return line.length > 500 ? `${line.slice(0, 500)}…` : line
}

/** An event as it goes into a JSON result (chunks become text: the model never sees bytes). */
export function eventValue(value: unknown): unknown {
  return Buffer.isBuffer(value) ? value.toString('utf8') : value
}

/** What `empty-result` turns an exactly-empty stdout into. */
export function emptyResult(spec: ToolSpec): string {
  return spec.emptyResult?.tag === 'AddMessage' ? spec.emptyResult.contents : ''
}
