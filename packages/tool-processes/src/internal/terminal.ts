/**
 * `processes screen` and `processes keys` (issue 31, decision 0110): the screen of a process on a
 * terminal (a tool that declared `process.terminal`, a bash command run with `tty`), and
 * keystrokes typed into it followed by a bounded wait for the program to answer.
 */
import type { TaskRegistry } from '@toolvisor/tasks'
import {
  type Keystroke,
  type ScreenSnapshot,
  type Settled,
  TerminalError,
  TerminalSession,
} from '@toolvisor/terminal'
import type { ToolCallContext, ToolResult } from '@toolvisor/toolbox'
import { answer } from '../answers.js'

/** How long `keys` waits for the answer when the call says nothing, and at most, in ms. */
export const DEFAULT_KEYS_WAIT_MS = 2_000
export const MAX_KEYS_WAIT_MS = 30_000

/** The terminal session of a process of the calling session; refused for one on pipes. */
function sessionOf(tasks: TaskRegistry, id: string, session: string | undefined): TerminalSession {
  const process = tasks.process(id, session)
  if (process.terminal === undefined) {
    throw new TerminalError(
      'TERMINAL_ERR_NOT_A_TERMINAL',
      `process ${id} does not run on a terminal: it has no screen and takes no keys (a tool declares process.terminal; bash takes tty: true)`,
    )
  }
  return TerminalSession.of(process)
}

/** A screen as `processes` answers it. */
function screenBody(snapshot: ScreenSnapshot) {
  return {
    size: `${snapshot.columns}x${snapshot.height}`,
    fullScreen: snapshot.buffer === 'alternate',
    title: snapshot.title,
    cursor: { row: snapshot.cursor.row + 1, column: snapshot.cursor.column + 1 },
    rows: trimmed(snapshot.rows),
  }
}

/** The rows without the blank ones at the bottom. */
function trimmed(rows: readonly string[]): string[] {
  const kept = [...rows]
  while (kept.length > 0 && kept.at(-1) === '') kept.pop()
  return kept
}

/** `screen`: what a person would see on the process's terminal now. */
export async function screen(
  tasks: TaskRegistry,
  id: string,
  session: string | undefined,
): Promise<ToolResult> {
  const terminal = sessionOf(tasks, id, session)
  const snapshot = await terminal.snapshot()
  return answer({
    process: id,
    status: tasks.get(id, session).lifecycle.status,
    screen: screenBody(snapshot),
  })
}

/** What a `keys` call types, and how long it waits. */
export interface KeysCall {
  readonly text?: string | undefined
  readonly keys?: readonly string[] | undefined
  readonly until?: string | undefined
  readonly waitMs?: number | undefined
  readonly columns?: number | undefined
  readonly rows?: number | undefined
}

/**
 * `keys`: types `text`, then `keys` by name (resizing first when `columns` and `rows` are given),
 * waits until `until` shows (literal text), the output is quiet, the process ends or the wait's
 * bound, and answers with how the wait ended and the screen.
 */
export async function keys(
  tasks: TaskRegistry,
  id: string,
  call: KeysCall,
  ctx: ToolCallContext,
): Promise<ToolResult> {
  const terminal = sessionOf(tasks, id, ctx.sessionId)
  if ((call.columns === undefined) !== (call.rows === undefined))
    return answer({ error: 'a resize gives both columns and rows' }, true)
  const input: Keystroke[] = [
    ...(call.text !== undefined && call.text.length > 0 ? [{ text: call.text }] : []),
    ...(call.keys ?? []).map((key) => ({ key })),
  ]
  // Checked whole before anything is typed: an unknown key or an oversized input types nothing.
  TerminalSession.encode(input, terminal)
  if (call.columns !== undefined) terminal.resize({ columns: call.columns, rows: call.rows! })
  const until = call.until !== undefined && call.until.length > 0 ? call.until : undefined
  const settling: Promise<Settled> = terminal.settle({
    maxMs: Math.min(call.waitMs ?? DEFAULT_KEYS_WAIT_MS, MAX_KEYS_WAIT_MS),
    ...(until !== undefined ? { text: until } : {}),
    ...(ctx.signal ? { signal: ctx.signal } : {}),
  })
  const typed = await terminal.send(input)
  const settled = await settling
  const snapshot = await terminal.snapshot()
  return answer({
    process: id,
    typed,
    settled,
    status: tasks.get(id, ctx.sessionId).lifecycle.status,
    screen: screenBody(snapshot),
  })
}
