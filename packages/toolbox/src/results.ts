import type { ReadBack } from '@toolvisor/answers'
import { ESCAPING, eventValue, type FittedBytes, type Renderer } from '@toolvisor/answers'
import type { ToolSpec } from '@toolvisor/describe-v2'
import {
  type CapturedOutput,
  type ManagedProcess,
  type ProcessExit,
  type SequencedEvent,
  spillCutText,
} from '@toolvisor/process-runtime'
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
      // Killed by toolvisor for a reason of its own (its fork server died): the reason comes first.
      return exit.why !== undefined ? `${exit.why} (${how})` : how
  }
}

/** True when the process ran to a clean end. */
export function succeeded(exit: ProcessExit): boolean {
  return exit.status === 'exited' && exit.code === 0 && exit.reason === 'exit'
}

/** Facts for the host about how a process ended (never shown to the model as such). */
export function exitMeta(process: ManagedProcess, exit: ProcessExit): Record<string, unknown> {
  const stdout = process.output.stdout()
  const stderr = process.output.stderr()
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

/** How a failure is shown. */
export interface FailureOptions {
  /** Before the sentence (`check `, ...). */
  readonly prefix?: string
  readonly render?: Renderer
  /** The id its output is read back by (a task or oneshot call; absent for describe and help). */
  readonly readAs?: string
  /** The words of that read (none: the tails do not say how to read the rest). */
  readonly readBack?: ReadBack | undefined
}

/**
 * The error result of a run that did not succeed (ruling 4): what happened, then bounded tails of
 * both stdout and stderr (many tools print their error on stdout), each saying how to read it whole.
 */
export function failure(
  tool: string,
  process: ManagedProcess,
  exit: ProcessExit,
  options: FailureOptions = {},
): ToolResult {
  const render = options.render ?? ESCAPING
  const parts = [`${options.prefix ?? ''}${tool} failed: ${describeExit(exit)}`]
  const section = (name: 'stdout' | 'stderr', output: CapturedOutput) => {
    if (output.totalBytes === 0) return
    const tail = output.tail.subarray(Math.max(0, output.tail.length - ERROR_TAIL_BYTES))
    // Past a cut spill file, "all of it" is what was kept, and the note says how much was not.
    const call =
      options.readAs && options.readBack
        ? options.readBack.call({ command: 'output', process: options.readAs, stream: name })
        : undefined
    const lost = output.spillCut ? `; ${spillCutText(output.spillCut, output.totalBytes)}` : ''
    const whole =
      call === undefined
        ? lost
        : output.spillCut
          ? `; what is kept of it: ${call}${lost}`
          : `; all of it: ${call}`
    const cut =
      output.totalBytes > tail.length ? ` (last ${tail.length} of ${output.totalBytes} bytes${whole})` : ''
    parts.push(`--- ${name}${cut} ---\n${render.text(tail.toString('utf8')).replace(/\n$/, '')}`)
  }
  section('stdout', process.output.stdout())
  section('stderr', process.output.stderr())
  return text(parts.join('\n'), true, exitMeta(process, exit))
}

/**
 * The network refusals of a run that succeeded all the same (decision 0111): its stderr holds
 * them, and a successful result shows no stderr, so they are added to it, one line each (`\n[network:
 * blocked example.com:443, not in the allow list]`); empty when nothing was refused.
 */
export function networkNote(process: ManagedProcess): string {
  if (!process.usage()?.network?.denied) return ''
  const marks = process.output.stderrLines(256).filter((line) => /^\[network: .*\]$/.test(line))
  return marks.length === 0 ? '' : `\n${[...new Set(marks)].join('\n')}`
}

/** Output bytes fitted for an answer as the model reads them: text, or base64 under a header. */
export function bytesText(shown: FittedBytes): string {
  return shown.base64 ? `[binary output, ${shown.used} bytes, base64]\n${shown.text}` : shown.text
}

/** A one-line rendering of an event, for progress messages. */
export function eventLine(event: SequencedEvent, render: Renderer = ESCAPING): string {
  const value = eventValue(event.value)
  const line = typeof value === 'string' ? render.text(value) : render.json(value)
  return line.length > 500 ? `${line.slice(0, 500)}…` : line
}

/** What `empty-result` turns an exactly-empty stdout into. */
export function emptyResult(spec: ToolSpec): string {
  return spec.emptyResult?.tag === 'AddMessage' ? spec.emptyResult.contents : ''
}
