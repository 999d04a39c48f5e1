/**
 * What the three profiles' tools (claude-code-like.ts, daemon-like.ts, codex-like.ts) share: the
 * services, the foreground run, the inline wait (the tool shape: tool.ts).
 */

import type { Renderer } from '@toolvisor/answers'
import { newestBytes, type StreamBytes, type TerminalSize } from '@toolvisor/process-runtime'
import {
  type SessionInfo,
  type TaskBytes,
  type TaskInfo,
  type TaskRegistry,
  TasksError,
} from '@toolvisor/tasks'
import type { Approval, ToolCallContext, ToolResult } from '@toolvisor/toolbox'
import type { BashOptions } from '../config.js'
import { BashError } from '../errors.js'
import type { StandingModes } from '../internal/escalation.js'
import type { Command, Launch, Launcher } from '../internal/launcher.js'
import { refuseOverCap, type TaskCap } from '../internal/pending.js'
import { denialLines, renderRun, runEnd, spills } from '../internal/render.js'
import { workdirOf } from '../internal/workdir.js'
import type { SandboxMode } from '../modes.js'
import type { BashNetwork } from '../network.js'
import { networkLines, taskErrors } from './network-lines.js'

/** What the tools of a profile run on. */
export interface BashServices {
  readonly options: BashOptions
  readonly tasks: TaskRegistry
  readonly launcher: Launcher
  /** Control codes escaped (`\uXXXX`), unless the operator keeps them. */
  readonly render: Renderer
  /** The session a call comes from, when the host has a sessions service and it is open. */
  session(id: string | undefined): SessionInfo | undefined
  /** The standing sandbox modes (the default and each session's). */
  readonly modes: StandingModes
  /** What the confining modes' commands reach (`bash.network`, else an empty allow list: decision 0112). */
  readonly network: BashNetwork
  /** The `approval` service, when a host provides one (read at each escalation). */
  approval(): Approval | undefined
  /** The mode and mechanism of each background task started under a sandbox mode, by task id. */
  readonly confined: Map<string, Pick<Launch, 'mode' | 'mechanism' | 'user'>>
  /** The cap on each session's background tasks, and hyperhive's queue behind it. */
  readonly cap: TaskCap
  /**
   * The profile's line after a run whose connections were blocked for not being in the allow list
   * (decision 0112), naming the hosts; absent: the profile cannot ask for names (codex).
   */
  readonly networkHint: ((hosts: readonly string[]) => string) | undefined
}

/** A text result (`Error: ` before the message of an error, as seed 001 shows errors). */
export function answer(text: string, isError = false, meta?: Record<string, unknown>): ToolResult {
  return {
    content: [{ type: 'text', text: isError ? `Error: ${text}` : text }],
    isError,
    ...(meta ? { meta } : {}),
  }
}

/** A call's command line, as `bash` takes it in every profile. */
export interface CommandCall {
  readonly command: string
  readonly workdir: string | undefined
  /** The foreground timeout asked for (cut to the cap; default the operator's). */
  readonly timeoutMs: number | undefined
  /** The background task's name (its id). */
  readonly name?: string | undefined
  /** What an unnamed background task's id starts with (default `bash-`: `bash-1`, ...). */
  readonly idPrefix?: string | undefined
  /** The sandbox mode it runs under (`callGrant`); absent: bash is not sandboxed. */
  readonly mode?: SandboxMode | undefined
  /** Network names the user allowed for this call only (`callGrant`), beyond the standing network. */
  readonly network?: readonly string[] | undefined
  /** Run it on a pseudo-terminal of this size (`tty: true`). */
  readonly terminal?: TerminalSize | undefined
}

/**
 * Runs a call's command in the foreground (seed 001's result), or, given `background`, starts it
 * as a task of the calling session and answers with what `background` makes of that task.
 */
export async function runCommand(
  services: BashServices,
  call: CommandCall,
  ctx: ToolCallContext,
  background: ((task: TaskInfo) => Promise<ToolResult>) | undefined,
): Promise<ToolResult> {
  const command = await commandOf(services, { ...call, ctx })
  if (background === undefined)
    return foreground(services, command, timeoutOf(services.options, call.timeoutMs))
  const named = {
    ...(call.name !== undefined ? { name: call.name } : {}),
    ...(call.idPrefix !== undefined ? { idPrefix: call.idPrefix } : {}),
  }
  refuseOverCap(services.cap, ctx.sessionId)
  const task = await services.launcher.background(services.tasks, command, named)
  remember(services, task.id, command.launch)
  const result = await background(task)
  // Answered while it runs (a wait that returned it saw it end): it now lives on by its id.
  services.tasks.detach(task.id)
  return result
}

/** Keeps how a background task is confined, for the lines its end shows (`taskDenial`). */
export function remember(services: BashServices, id: string, launch: Launch): void {
  const { mode, mechanism, user } = launch
  if (mode !== undefined)
    services.confined.set(id, { mode, ...(mechanism ? { mechanism } : {}), ...(user ? { user } : {}) })
}

/**
 * The command of a call, in its working directory (checked: nothing starts in a missing one),
 * launched under its mode with the session's working directory as the workspace, and with the
 * names its user allowed for it.
 */
export async function commandOf(
  services: BashServices,
  call: {
    readonly command: string
    readonly workdir: string | undefined
    readonly mode?: SandboxMode | undefined
    readonly network?: readonly string[] | undefined
    readonly terminal?: TerminalSize | undefined
    readonly ctx: ToolCallContext
  },
): Promise<Command> {
  const root = workspaceOf(services, call.ctx)
  const cwd = workdirOf({ requested: call.workdir, session: root, fallback: root })
  // Every profile runs under the session's standing mode; only seed 001's bash can ask for more.
  const mode = call.mode ?? services.modes.of(call.ctx.sessionId)
  const launch = await services.launcher.launchFor(mode, root, call.network ?? [])
  return { command: call.command, cwd, ctx: call.ctx, launch, terminal: call.terminal }
}

/** The session's working directory (the workspace its modes grant), else the operator's, else toolvisor's. */
function workspaceOf(services: BashServices, ctx: ToolCallContext): string {
  return services.session(ctx.sessionId)?.cwd ?? services.options.workdir ?? process.cwd()
}

/**
 * The directory a call's command runs in, resolved and checked as `commandOf` does it (a missing
 * one is `BASH_ERR_WORKDIR`): what an approval prompt shows beside the command.
 */
export function callWorkdir(
  services: BashServices,
  requested: string | undefined,
  ctx: ToolCallContext,
): string {
  const root = workspaceOf(services, ctx)
  return workdirOf({ requested, session: root, fallback: root })
}

/** A background shell of the calling session: another session's is refused, another kind too. */
export function bashTask(services: BashServices, id: string, session: string | undefined): TaskInfo {
  const task = services.tasks.get(id, session)
  if (task.kind !== 'bash') {
    throw new BashError('BASH_ERR_NOT_BASH_TASK', `task ${id} is a ${task.kind} task, not a background shell`)
  }
  return task
}

/** What is new of a background shell of the calling session since its previous read (its own cursor). */
export function readTask(services: BashServices, id: string, ctx: ToolCallContext): TaskBytes {
  bashTask(services, id, ctx.sessionId)
  const read = services.tasks.readBytes(id, ctx.sessionId, { max: services.options.outputBytes, utf8: true })
  // The read shows the end: the owner has seen it.
  if (read.task.exit !== undefined) services.tasks.seen(id, ctx.sessionId)
  if (processOf(services, id, ctx.sessionId)?.terminal === undefined) return read
  return { ...read, stdout: lineEnds(read.stdout) }
}

/** The process of a task of the session, when it has one (not pending, not lost in a restart). */
export function processOf(services: BashServices, id: string, session: string | undefined) {
  try {
    return services.tasks.process(id, session)
  } catch (error) {
    if (
      TasksError.is(error) &&
      (error.code === 'TASKS_ERR_TASK_PENDING' || error.code === 'TASKS_ERR_TASK_LOST')
    )
      return undefined
    throw error
  }
}

/** A terminal's lines as text lines: its CR LF (the terminal's line end, not the program's) as LF. */
export function lineEnds(read: StreamBytes): StreamBytes {
  const bytes = read.bytes
  if (!bytes.includes(0x0d)) return read
  return { ...read, bytes: Buffer.from(bytes.toString('latin1').replaceAll('\r\n', '\n'), 'latin1') }
}

/**
 * Stops a background shell of the calling session: its declared stop (`force`: SIGKILL at once),
 * resolving once it is gone, or at once with `detach`. False when it had already ended.
 */
export async function stopTask(
  services: BashServices,
  id: string,
  ctx: ToolCallContext,
  options: { readonly force?: boolean; readonly detach?: boolean } = {},
): Promise<boolean> {
  if (bashTask(services, id, ctx.sessionId).exit !== undefined) {
    services.tasks.seen(id, ctx.sessionId)
    return false
  }
  const stopping = services.tasks.cancel(id, ctx.sessionId, options.force ? { force: true } : {})
  if (options.detach) stopping.catch(() => {})
  else {
    await stopping
    // Its answer says it was stopped: no other news of its end is due to the owner.
    services.tasks.seen(id, ctx.sessionId)
  }
  return true
}

/** The timeout of a foreground call: the one asked for, cut to the cap, else the default. */
export function timeoutOf(options: BashOptions, asked: number | undefined): number {
  return Math.min(asked ?? options.defaultTimeoutMs, options.maxTimeoutMs)
}

/**
 * Runs a command in the foreground and renders seed 001's result. Only a failed start and an
 * abort are errors; a non-zero exit, a signal or a timeout is reported in the text.
 */
export async function foreground(
  services: BashServices,
  command: Command,
  timeoutMs: number,
): Promise<ToolResult> {
  const process = services.launcher.foreground(command, timeoutMs)
  const exit = await process.exit
  if (exit.reason === 'cancelled') return answer('command aborted', true)
  // A limit that ended the command is told in its markers, after what it printed.
  if (exit.status === 'failed' && exit.reason !== 'limit')
    return answer(exit.why ?? 'the command could not be started', true)
  const max = services.options.outputBytes
  const read = (stream: 'stdout' | 'stderr') =>
    newestBytes(process.output, stream, { from: 0, max, utf8: true, final: true })
  const stdout = read('stdout')
  const streams = { stdout: command.terminal ? lineEnds(stdout) : stdout, stderr: read('stderr') }
  // On a terminal the program's errors are on the one stream it has.
  const errors = command.terminal ? streams.stdout.bytes : streams.stderr.bytes
  const denial = denialLines(command.launch, exit.code, errors, escalates(services))
  const blocked = networkLines(services, command.launch, errors)
  const meta = {
    process: process.id,
    exitCode: exit.code,
    signal: exit.signal,
    reason: exit.reason,
    ...(command.launch.mode !== undefined ? { sandboxMode: command.launch.mode } : {}),
    ...(denial.length > 0 ? { sandboxDenied: true } : {}),
    ...(exit.limit ? { limit: exit.limit.field } : {}),
    ...(exit.usage ? { usage: exit.usage } : {}),
    ...spills(streams),
  }
  const end = { ...runEnd(exit, timeoutMs), sandbox: [...denial, ...blocked] }
  return answer(renderRun(streams, end, services.render), false, meta)
}

/** The hint goes only where the escalation fields are advertised: seed 001's bash, a confining mode. */
function escalates(services: BashServices): boolean {
  return services.modes.confining && services.options.profile === 'dsh'
}

/**
 * The sandbox lines of a settled background task (seed 001: on every read that sees it, since a
 * denial is only classifiable once the whole stderr is in): read from the end of its stderr. The
 * profile's network hint follows when its connections were blocked (decision 0112).
 */
export function taskDenial(services: BashServices, task: TaskInfo): string[] {
  const confined = services.confined.get(task.id)
  const tail = taskErrors(services, task)
  if (confined === undefined || tail === undefined) return []
  return [
    ...denialLines(confined, task.exit!.code, tail, escalates(services)),
    ...networkLines(services, confined, tail),
  ]
}

/**
 * Waits up to `seconds` (cut to the operator's cap) for a task of the calling session to end:
 * its info when it did (the registry then marks its completion observed: no notice follows),
 * `undefined` when it still runs or the call was cancelled.
 */
export async function waitInline(
  services: BashServices,
  id: string,
  seconds: number,
  ctx: ToolCallContext,
): Promise<TaskInfo | undefined> {
  const ms = Math.min(seconds, services.options.maxWaitSeconds) * 1000
  if (ms <= 0) return undefined
  const task = await services.tasks.wait(id, ctx.sessionId, ms, ctx.signal)
  return task.exit !== undefined ? task : undefined
}
