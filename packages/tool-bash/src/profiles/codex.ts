/**
 * The `codex` profile (issue 31): Codex's unified exec, in its own words, so a model trained on
 * Codex finds the tools it knows. `exec_command` runs a command (on a terminal with `tty`) and
 * answers with its output once it ended, or with a `session_id` when it still runs after the yield;
 * `write_stdin` types `chars` into it (empty: a poll) and answers with what is new. Codex's bounds
 * (`unified_exec/mod.rs`) and its answer's shape (`Chunk ID`, `Wall time`, `Process exited with
 * code N` or `Process running with session ID N`, `Original token count`, `Output:`).
 */

import { randomBytes, randomInt } from 'node:crypto'
import { constants } from 'node:os'
import { TasksError } from '@toolvisor/tasks'
import { TerminalSession } from '@toolvisor/terminal'
import { required, type Tool, type ToolCallContext, type ToolResult } from '@toolvisor/toolbox'
import { anyString, flag, invalid, positive, text } from '../internal/args.js'
import { answer, type BashServices, bashTask, lineEnds, processOf, runCommand } from './common.js'
import { DEFAULT_TERMINAL } from './terminal.js'
import { bashTool } from './tool.js'

/** Codex's bounds (`unified_exec/mod.rs`). */
export const CODEX = {
  minYieldMs: 250,
  maxYieldMs: 30_000,
  defaultExecYieldMs: 10_000,
  defaultWriteYieldMs: 250,
  minEmptyPollMs: 5_000,
  maxEmptyPollMs: 300_000,
  defaultMaxOutputTokens: 10_000,
  /** Codex's process ids are random, 1000 to 99999. */
  firstId: 1_000,
  lastId: 99_999,
} as const

/** Bytes a token stands for, as Codex approximates it. */
const BYTES_PER_TOKEN = 4

const clamp = (value: number, low: number, high: number) => Math.min(Math.max(value, low), high)

const sessionId = positive('The session_id an exec_command answer gave for a process still running.')

/** Codex's `exec_command`. */
export function execCommand(services: BashServices): Tool {
  return bashTool({
    name: 'exec_command',
    description:
      'Runs a command in a PTY, returning output or a session ID for ongoing interaction. The command runs ' +
      'in bash; with `tty: true` it runs on a pseudo-terminal (for interactive programs: write to it with ' +
      'write_stdin), else on pipes with no stdin. It waits up to `yield_time_ms` for the command to end.',
    fields: {
      cmd: required(text('Shell command to execute.')),
      workdir: text("Working directory to run the command in; defaults to the session's."),
      tty: flag('Whether to allocate a TTY for the command. Defaults to false (plain pipes).'),
      yield_time_ms: positive(
        `How long to wait (in milliseconds) for output before yielding (default ${CODEX.defaultExecYieldMs}, ${CODEX.minYieldMs} to ${CODEX.maxYieldMs}).`,
      ),
      max_output_tokens: positive(
        `Maximum number of tokens to return (default ${CODEX.defaultMaxOutputTokens}).`,
      ),
    },
    async run(args, ctx) {
      const began = Date.now()
      const call = {
        command: args.cmd,
        workdir: args.workdir,
        timeoutMs: undefined,
        name: freeId(services, ctx),
        terminal: args.tty === true ? DEFAULT_TERMINAL : undefined,
      }
      const yieldMs = clamp(
        args.yield_time_ms ?? CODEX.defaultExecYieldMs,
        CODEX.minYieldMs,
        CODEX.maxYieldMs,
      )
      const waited = async (task: { readonly id: string }) => {
        await services.tasks.wait(task.id, ctx.sessionId, yieldMs, ctx.signal)
        return codexAnswer(services, task.id, ctx, began, args.max_output_tokens)
      }
      return runCommand(services, call, ctx, waited)
    },
  })
}

/** Codex's `write_stdin`. */
export function codexWriteStdin(services: BashServices): Tool {
  return bashTool({
    name: 'write_stdin',
    description:
      'Writes characters to an existing unified exec session and returns recent output. Empty `chars` polls: ' +
      'it waits (at least 5 s) and returns the output produced since the last call. Characters are written as ' +
      'is: "\\n" ends a line, "\\u0003" is Ctrl-C, "\\u0004" Ctrl-D. Only a session started with tty: true takes characters.',
    fields: {
      session_id: required(sessionId),
      chars: anyString('Bytes to write to stdin (may be empty to poll).'),
      yield_time_ms: positive(
        `How long to wait (in milliseconds) for output before yielding (default ${CODEX.defaultWriteYieldMs}; an empty poll waits ${CODEX.minEmptyPollMs} to ${CODEX.maxEmptyPollMs}).`,
      ),
      max_output_tokens: positive(
        `Maximum number of tokens to return (default ${CODEX.defaultMaxOutputTokens}).`,
      ),
    },
    async run(args, ctx) {
      const began = Date.now()
      const id = String(args.session_id)
      const chars = args.chars ?? ''
      const task = bashTask(services, id, ctx.sessionId)
      if (chars.length > 0) {
        const process = processOf(services, id, ctx.sessionId)
        if (process?.terminal === undefined || task.exit !== undefined)
          return answer(
            'stdin is closed for this session; rerun exec_command with tty=true to keep stdin open',
            true,
          )
        await process.terminal.type(TerminalSession.encode([{ text: chars }]))
      }
      const yieldMs =
        chars.length > 0
          ? clamp(args.yield_time_ms ?? CODEX.defaultWriteYieldMs, CODEX.minYieldMs, CODEX.maxYieldMs)
          : clamp(args.yield_time_ms ?? CODEX.minEmptyPollMs, CODEX.minEmptyPollMs, CODEX.maxEmptyPollMs)
      await services.tasks.wait(id, ctx.sessionId, yieldMs, ctx.signal)
      return codexAnswer(services, id, ctx, began, args.max_output_tokens)
    },
  })
}

/** A random id Codex would give (1000 to 99999) that no task holds. */
function freeId(services: BashServices, ctx: ToolCallContext): string {
  for (let tries = 0; tries < 100; tries++) {
    const id = String(randomInt(CODEX.firstId, CODEX.lastId + 1))
    try {
      services.tasks.get(id, ctx.sessionId)
    } catch (error) {
      if (TasksError.is(error) && error.code === 'TASKS_ERR_UNKNOWN_TASK') return id
    }
  }
  throw invalid('no free session id: too many processes')
}

/** Codex's answer: what is new of the process since the last read, and whether it still runs. */
function codexAnswer(
  services: BashServices,
  id: string,
  ctx: ToolCallContext,
  began: number,
  maxTokens: number | undefined,
): ToolResult {
  const max = (maxTokens ?? CODEX.defaultMaxOutputTokens) * BYTES_PER_TOKEN
  const read = services.tasks.readBytes(id, ctx.sessionId, { max, utf8: true })
  const exit = read.task.exit
  if (exit !== undefined) services.tasks.seen(id, ctx.sessionId)
  const terminal = processOf(services, id, ctx.sessionId)?.terminal !== undefined
  const stdout = terminal ? lineEnds(read.stdout) : read.stdout
  const output = services.render.text(Buffer.concat([stdout.bytes, read.stderr.bytes]).toString('utf8'))
  const total =
    read.stdout.skipped + read.stdout.bytes.length + read.stderr.skipped + read.stderr.bytes.length
  const skipped = read.stdout.skipped + read.stderr.skipped
  const lines = [
    `Chunk ID: ${randomBytes(3).toString('hex')}`,
    `Wall time: ${((Date.now() - began) / 1000).toFixed(4)} seconds`,
    exit === undefined
      ? `Process running with session ID ${id}`
      : `Process exited with code ${exitCode(exit)}`,
    `Original token count: ${Math.ceil(total / BYTES_PER_TOKEN)}`,
    'Output:',
    skipped > 0 ? `…${Math.ceil(skipped / BYTES_PER_TOKEN)} tokens truncated…${output}` : output,
  ]
  return answer(lines.join('\n'), false, { session_id: Number(id) })
}

/** The exit code a shell would show: the code, or 128 + the signal's number. */
function exitCode(exit: { readonly code: number | null; readonly signal: NodeJS.Signals | null }): number {
  if (exit.code !== null) return exit.code
  const number = exit.signal === null ? undefined : osSignals[exit.signal]
  return number === undefined ? -1 : 128 + number
}

const osSignals: Readonly<Record<string, number>> = constants.signals
