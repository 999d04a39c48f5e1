/**
 * What the profiles' terminal tools share (dsh's and codex's `write_stdin`, `bash_output` with
 * `screen`): the terminal of a background task of the calling session, typed into, resized, waited
 * on and read as the screen a person would see.
 */

import type { TerminalSize } from '@toolvisor/process-runtime'
import { type Keystroke, type Settled, screenText, TerminalError, TerminalSession } from '@toolvisor/terminal'
import type { ToolCallContext } from '@toolvisor/toolbox'
import { BashError } from '../errors.js'
import { cells, flag } from '../internal/args.js'
import { type BashServices, bashTask, processOf } from './common.js'

/** A command on a terminal (issue 31), for interactive programs; `afterwards` says how it is typed into and read. */
export function ttyFields(afterwards: string) {
  return {
    tty: flag(
      'Run it on a pseudo-terminal, for interactive programs (a REPL, a y/n or password prompt, less, vim, top): ' +
        `its stdout and stderr arrive as one stream, as a terminal shows them. ${afterwards}`,
    ),
    columns: cells("With tty: the terminal's width (default 80)."),
    rows: cells("With tty: the terminal's height (default 24)."),
  }
}

/** The terminal fields of dsh's and toolnexus's `bash`. */
export const TTY_FIELDS = ttyFields(
  'With run_in_background, type into it with write_stdin and read what it shows with bash_output ' +
    '(`screen: true` for the screen a person would see).',
)

/** A terminal's size when the call names none (a VT100's, as every terminal emulator starts). */
export const DEFAULT_TERMINAL: TerminalSize = { columns: 80, rows: 24 }

/** The terminal a call asks for: none without `tty`; the size it names, else 80x24. */
export function terminalOf(args: {
  readonly tty?: boolean | undefined
  readonly columns?: number | undefined
  readonly rows?: number | undefined
}): TerminalSize | undefined {
  if (args.tty !== true) {
    if (args.columns !== undefined || args.rows !== undefined)
      throw new BashError(
        'BASH_ERR_INVALID_ARGUMENT',
        'invalid columns: only a command with tty: true has a size',
      )
    return undefined
  }
  return { columns: args.columns ?? DEFAULT_TERMINAL.columns, rows: args.rows ?? DEFAULT_TERMINAL.rows }
}

/** The terminal of a background task of the calling session; refused for one on pipes, naming the fix. */
export function terminalTask(services: BashServices, id: string, ctx: ToolCallContext): TerminalSession {
  bashTask(services, id, ctx.sessionId)
  const process = processOf(services, id, ctx.sessionId)
  if (process?.terminal === undefined) {
    throw new TerminalError(
      'TERMINAL_ERR_NOT_A_TERMINAL',
      `task ${id} does not run on a terminal: it takes no input; start a command with tty: true to type into it`,
    )
  }
  return TerminalSession.of(process)
}

/** What a call types, and how long it waits for the answer. */
export interface TypeCall {
  readonly input: readonly Keystroke[]
  /** Resize the terminal first. */
  readonly size?: TerminalSize | undefined
  /** The most it waits after typing, in ms. */
  readonly waitMs: number
  /** Quiet time that ends the wait (default the session's); absent with `until`: only `until`, the end or the bound. */
  readonly quietMs?: number | undefined
  /** Literal text whose showing ends the wait (a prompt). */
  readonly until?: string | undefined
}

/**
 * Types into the terminal (resizing it first when asked) and waits for the program to answer:
 * until `until` shows, it is quiet, it ends, `waitMs` passed or the call was cancelled.
 */
export async function typeAndWait(
  session: TerminalSession,
  call: TypeCall,
  ctx: ToolCallContext,
): Promise<Settled> {
  // Checked whole before anything is typed: an unknown key or an oversized input types nothing.
  TerminalSession.encode(call.input, session)
  if (call.size !== undefined) session.resize(call.size)
  const settling = session.settle({
    maxMs: call.waitMs,
    ...(call.quietMs !== undefined ? { quietMs: call.quietMs } : {}),
    ...(call.until !== undefined ? { text: call.until } : {}),
    ...(ctx.signal ? { signal: ctx.signal } : {}),
  })
  await session.send(call.input)
  return settling
}

/** The screen as the model reads it: its rows, escaped as every output is, under a head line. */
export async function screenAnswer(services: BashServices, session: TerminalSession): Promise<string> {
  return services.render.text(screenText(await session.snapshot()))
}

/** The marker of a wait for `until` that ended before it showed; empty when it showed or none was asked. */
export function untilMarker(call: TypeCall, settled: Settled): string {
  if (call.until === undefined || settled === 'pattern' || settled === 'ended') return ''
  return `[${JSON.stringify(call.until)} did not show within ${call.waitMs} ms]`
}
