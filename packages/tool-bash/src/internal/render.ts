/**
 * Seed 001's result texts (deepseek-harness `dsh-tool-bash`), exactly: the interface a model
 * written against that harness reads. The toolnexus profile shows foreground results the same way.
 */

import type { Renderer } from '@toolvisor/answers'
import { type ProcessExit, type StreamBytes, spillCutText } from '@toolvisor/process-runtime'
import type { TaskBytes, TaskInfo } from '@toolvisor/tasks'
import { DENIAL_TAIL_BYTES, denialMarker, deniedBy, ESCALATION_HINT } from '../modes.js'
import type { Launch } from './launcher.js'

/** How a run ended, as its markers say it. */
export interface RunEnd {
  /** The timeout in ms when the timer fired (whatever the process did next), else undefined. */
  readonly timedOutMs: number | undefined
  readonly code: number | null
  readonly signal: string | null
  /** The sandbox lines (the denial marker, the escalation hint), reported first among the markers. */
  readonly sandbox?: readonly string[]
  /** Why toolvisor itself killed the command, when it did for a reason of its own (`ProcessExit.why`). */
  readonly killedBecause?: string
}

/**
 * A stream's text (control codes escaped unless kept), and the truncation marker when cut: it
 * names the spill file, and says how much of the output that file did not keep when it was cut.
 * A cut tail starts at a line: the rest of the line the cut fell in is left out too, unless that
 * line fills more than half of what is kept (then the tail starts mid-line, as it must).
 */
export function streamText(read: StreamBytes, render: Renderer): string {
  const text = render.text(fromLine(read).toString('utf8'))
  if (read.skipped === 0) return text
  if (read.spillCut !== undefined && read.spillPath !== undefined)
    return `${text}\n[output truncated; part of it is in ${read.spillPath}: ${spillCutText(read.spillCut, read.total)}]`
  return `${text}\n[output truncated; full output: ${read.spillPath ?? '(unavailable)'}]`
}

/** The kept bytes of a stream, from the first whole line on when older bytes were skipped. */
function fromLine(read: StreamBytes): Buffer {
  if (read.skipped === 0) return read.bytes
  const newline = read.bytes.indexOf(0x0a)
  if (newline === -1 || newline + 1 >= read.bytes.length || newline >= read.bytes.length / 2)
    return read.bytes
  return read.bytes.subarray(newline + 1)
}

/**
 * A finished run: stdout, then `[stderr]` and stderr when there is any, `(no output)` when
 * neither has anything, then `[timed out after <N>ms]` (whenever the timer fired, even when the
 * command then exited 0), `[<why>]` when toolvisor killed it for a reason of its own,
 * `[killed by signal: <SIG>]` or `[exit code: <N>]` for a non-zero exit.
 */
export function renderRun(
  streams: Pick<TaskBytes, 'stdout' | 'stderr'>,
  end: RunEnd,
  render: Renderer,
): string {
  const out = streamText(streams.stdout, render)
  const err = streamText(streams.stderr, render)
  let body = out
  if (err.length > 0) {
    if (body.length > 0 && !body.endsWith('\n')) body += '\n'
    body += `[stderr]\n${err}`
  }
  if (body.length === 0) body = '(no output)'
  const markers: string[] = [...(end.sandbox ?? [])]
  if (end.timedOutMs !== undefined) markers.push(`[timed out after ${end.timedOutMs}ms]`)
  if (end.killedBecause !== undefined) markers.push(`[${end.killedBecause}]`)
  if (end.signal !== null) markers.push(`[killed by signal: ${end.signal}]`)
  else if (end.code !== 0) markers.push(`[exit code: ${end.code}]`)
  if (markers.length === 0) return body
  if (!body.endsWith('\n')) body += '\n'
  return body + markers.join('\n')
}

/**
 * Seed 001's sandbox lines for a run: the denial marker when the run failed and its stderr shows
 * its mechanism denying a file access, then the escalation hint when `escalation` is available
 * (the fields are advertised) and a wider mode exists. Empty for an unsandboxed run.
 */
export function denialLines(
  launch: Pick<Launch, 'mode' | 'mechanism' | 'user'>,
  code: number | null,
  stderr: Buffer,
  escalation: boolean,
): string[] {
  const mode = launch.mode
  if (mode === undefined || mode === 'danger-full-access') return []
  const tail = stderr.subarray(Math.max(0, stderr.length - DENIAL_TAIL_BYTES)).toString('utf8')
  if (!deniedBy(launch.mechanism, code, tail, launch.user !== undefined)) return []
  return escalation ? [denialMarker(mode), ESCALATION_HINT] : [denialMarker(mode)]
}

/** The markers' view of an exit (`timeoutMs`: the bound the run had, if any). */
export function runEnd(exit: ProcessExit, timeoutMs?: number): RunEnd {
  return {
    timedOutMs: exit.reason === 'timeout' ? timeoutMs : undefined,
    code: exit.code,
    signal: exit.signal,
    ...(killedBecause(exit) !== undefined ? { killedBecause: killedBecause(exit)! } : {}),
  }
}

/**
 * Why toolvisor or a limit ended a run, as its marker reads (`killed: memory limit 64 MiB`), or
 * undefined: it ended by itself, was stopped on purpose, or never ran.
 */
export function killedBecause(exit: ProcessExit): string | undefined {
  if (exit.limit !== undefined) return exit.limit.marker
  return exit.status === 'exited' ? exit.why : undefined
}

/** True when the task was stopped on purpose: a kill, a session's close, the runtime's shutdown, a restart. */
export function stopped(exit: ProcessExit): boolean {
  return exit.reason === 'cancelled' || exit.reason === 'runtime-disposed' || exit.status === 'failed'
}

/**
 * Exactly one of `[status: running]`, `[status: killed]`, `[status: killed by <SIG>]`,
 * `[status: completed, exit code: <N>]`. A signal death counts as killed, stopped or not.
 */
export function statusLine(task: TaskInfo): string {
  const exit = task.exit
  if (exit === undefined) return '[status: running]'
  if (stopped(exit) || exit.signal !== null) {
    return `[status: killed${exit.signal !== null ? ` by ${exit.signal}` : ''}]`
  }
  return `[status: completed, exit code: ${exit.code ?? 0}]`
}

/** What a read of a background task found: its output text, and the drop marker when it cut any. */
export interface Delta {
  /** Stdout, then `[stderr]` and stderr; empty when neither has anything new. */
  readonly text: string
  /**
   * `[some output was dropped from memory; full output: <paths>]`, when a stream was cut (past a
   * spill file cut short: `what is kept of it: <paths>; N bytes past the first K were not kept: <why>`).
   */
  readonly dropped: string | undefined
}

/**
 * Output produced since the reader's previous read. A read keeps the newest bytes of each stream;
 * when it left any out, the drop marker names the spill files of the streams it cut (each holds
 * every byte unless its spill was cut short, and then the marker says how much it lacks), or
 * `(unavailable)`.
 */
export function delta(read: TaskBytes, render: Renderer): Delta {
  const out = render.text(read.stdout.bytes.toString('utf8'))
  const err = render.text(read.stderr.bytes.toString('utf8'))
  let text = out
  if (err.length > 0) {
    if (text.length > 0 && !text.endsWith('\n')) text += '\n'
    text += `[stderr]\n${err}`
  }
  const cut = [read.stdout, read.stderr].filter((stream) => stream.skipped > 0)
  if (cut.length === 0) return { text, dropped: undefined }
  const paths = cut.map((stream) => stream.spillPath).filter((path) => path !== undefined)
  const where = paths.length === cut.length ? paths.join(', ') : '(unavailable)'
  // A spill file cut short (its cap, the disk budget) does not hold the full output: say how much it lacks.
  const lost = cut.flatMap((stream) => (stream.spillCut ? [spillCutText(stream.spillCut, stream.total)] : []))
  if (lost.length > 0)
    return {
      text,
      dropped: `[some output was dropped from memory; what is kept of it: ${where}; ${lost.join('; ')}]`,
    }
  return { text, dropped: `[some output was dropped from memory; full output: ${where}]` }
}

/**
 * Seed 001's `bash_output` text: the delta or `(no new output)`, the drop marker, `[<why>]` when
 * toolvisor killed the task for a reason of its own or a limit ended it, one status line.
 */
export function outputText(read: TaskBytes, render: Renderer): string {
  const found = delta(read, render)
  let text = found.text.length > 0 ? found.text : '(no new output)'
  if (found.dropped !== undefined) text += `\n${found.dropped}`
  const exit = read.task.exit
  const why = exit && killedBecause(exit)
  if (why !== undefined) text += `\n[${why}]`
  return `${text}\n${statusLine(read.task)}`
}

/** Seed 001's completion notice. */
export function completionNotice(task: TaskInfo): string {
  const limit = task.exit?.limit ? ` [${task.exit.limit.marker}]` : ''
  return `background bash task ${task.id} finished ${statusLine(task)}${limit}. Read its output with bash_output.`
}

/** The spill files of a result, for the host. */
export function spills(streams: {
  readonly stdout: { readonly spillPath?: string }
  readonly stderr: { readonly spillPath?: string }
}): Record<string, string> {
  return {
    ...(streams.stdout.spillPath ? { stdoutSpill: streams.stdout.spillPath } : {}),
    ...(streams.stderr.spillPath ? { stderrSpill: streams.stderr.spillPath } : {}),
  }
}
