import type { Mailbox } from '@toolvisor/mailbox'
import { RuntimeError } from '@toolvisor/process-runtime'
import { type Sessions, type TaskRegistry, TasksError } from '@toolvisor/tasks'
import { TerminalError } from '@toolvisor/terminal'
import {
  type Oneshots,
  type Tool,
  ToolboxError,
  type ToolCallContext,
  type ToolResult,
} from '@toolvisor/toolbox'
import { answer, list, refusal } from '../answers.js'
import {
  type Args,
  DEFAULT_KEYS_WAIT_MS,
  DEFAULT_READ,
  DEFAULT_TAIL,
  DEFAULT_WAIT_SECONDS,
  MAX_WAIT_SECONDS,
  processesArgs,
} from './args.js'
import { pageAt, readOn, status, tail } from './events.js'
import { output } from './output.js'
import { keys, screen } from './terminal.js'
import { waitForMail } from './wait.js'

/** What `processes` works over: the tasks, the kept oneshot calls, the sessions and their mail. */
export interface ProcessesDeps {
  readonly tasks: TaskRegistry
  readonly oneshots: Oneshots
  readonly mailbox: Mailbox
  readonly sessions: Sessions
}

/** How `processes` answers: the operator's bounds. */
export interface ProcessesOptions {
  /** The most bytes an answer holds (the runtime's `resultBytes` by default). */
  readonly resultBytes: number
  /** The most events one tail, read or page returns. */
  readonly maxEvents: number
  /** How many events and stderr lines `status` shows. */
  readonly statusEvents: number
  readonly statusStderrLines: number
}

/** The model-facing description (one tool for every family: spec §2.4, D6); every number is the configured one. */
function description(options: ProcessesOptions): string {
  return (
    'Manage the long-running processes and tasks of this session (stream calls, services, background ' +
    'commands). command "list": every one with tool, kind, status and age. "status": one process\'s ' +
    `counters, last ${options.statusEvents} events and last ${options.statusStderrLines} stderr lines, and the ` +
    'runtime it was started with (user, working directory, envdir, sandbox, limits). ' +
    `"tail": its last n events (default ${DEFAULT_TAIL}, at most ${options.maxEvents}), oldest first. ` +
    `"read": the next events from where your last read ended (max, default ${DEFAULT_READ}). ` +
    '"page": events by position from offset (0 is the first event the process produced). ' +
    '"output": the raw bytes of stdout (or stream "stderr") from offset, length bytes at most; works for a ' +
    'task and for a oneshot call whose result was cut (its result names it). "stop": its declared cancel, ' +
    'then SIGKILL after its stop timeout (force: SIGKILL at once); the answer is how it exited. ' +
    '"screen": what a person would see on a process that runs on a terminal (rows, cursor, title). "keys": ' +
    'types text, then keys by name (Enter, C-c, Up, ...), into such a process, waits until the output is quiet, ' +
    `until shows, it ends, or wait_ms (default ${DEFAULT_KEYS_WAIT_MS}), and answers with the screen. ` +
    `"wait": blocks until this session has new mail (a service's output, a task's end not shown otherwise; from one process when ` +
    `"process" is given), at most timeout_seconds (default ${DEFAULT_WAIT_SECONDS}, at most ${MAX_WAIT_SECONDS}), ` +
    'and answers with it. ' +
    `Answers are JSON of at most ${options.resultBytes} bytes; "next" says where to go on.`
  )
}

/**
 * The shared `processes` tool over the task registry and the kept oneshot calls. Every answer
 * concerns only the calling session's tasks (and those started with no session); another
 * session's is refused, and every answer is bounded by the byte budget.
 */
export function processesTool(deps: ProcessesDeps, options: ProcessesOptions): Tool {
  const declared = processesArgs(options)
  return {
    name: 'processes',
    description: description(options),
    inputSchema: declared.schema,
    // It starts tools (which reach whatever they reach) and stops processes.
    annotations: {
      title: 'Manage tool processes',
      readOnlyHint: false,
      destructiveHint: true,
      openWorldHint: true,
    },
    async call(raw, ctx) {
      const args = declared.parse(raw)
      if ('problem' in args) return refusal(args.problem)
      try {
        return await run({ deps, options, args: args.value, ctx })
      } catch (error) {
        const known = RuntimeError.is(error) || TasksError.is(error) || ToolboxError.is(error)
        if (known || TerminalError.is(error)) return refusal(error.message)
        throw error
      }
    },
  }
}

interface Run {
  readonly deps: ProcessesDeps
  readonly options: ProcessesOptions
  readonly args: Args
  readonly ctx: ToolCallContext
}

async function run({ deps, options, args, ctx }: Run): Promise<ToolResult> {
  const { tasks, oneshots } = deps
  const session = ctx.sessionId
  const context = { tasks, oneshots, session, resultBytes: options.resultBytes }
  const id = args.process!
  switch (args.command) {
    case 'list':
      return shown(tasks, session, list(tasks.list(session), options.resultBytes))
    case 'status':
      return shown(
        tasks,
        session,
        status(context, id, { events: options.statusEvents, stderr: options.statusStderrLines }),
      )
    case 'tail':
      return tail(context, id, args.n ?? DEFAULT_TAIL)
    case 'read':
      return readOn(context, id, args.max ?? DEFAULT_READ)
    case 'page':
      return pageAt(context, id, args.offset ?? 0, args.max ?? DEFAULT_READ)
    case 'output':
      return output(context, {
        process: id,
        stream: args.stream ?? 'stdout',
        offset: args.offset ?? 0,
        length: args.length ?? options.resultBytes,
      })
    case 'wait':
      return waitForMail(
        { ...deps, session, resultBytes: options.resultBytes, signal: ctx.signal },
        { process: args.process, seconds: args.timeout_seconds ?? DEFAULT_WAIT_SECONDS },
      )
    case 'screen':
      return screen(tasks, id, session)
    case 'keys':
      return keys(tasks, id, { ...args, waitMs: args.wait_ms }, ctx)
    case 'stop': {
      const exit = await tasks.cancel(id, session, args.force ? { force: true } : {})
      tasks.seen(id, session)
      return answer({
        process: id,
        status: exit.status,
        exitCode: exit.code,
        signal: exit.signal,
        reason: exit.reason,
        ...(exit.why ? { why: exit.why } : {}),
      })
    }
  }
}

/**
 * An answer that shows tasks' statuses (`list`, `status`): each ended task it shows was seen by
 * its owner (`tasks.seen`), so a harness that announced it may clear it.
 */
function shown(tasks: TaskRegistry, session: string | undefined, result: ToolResult): ToolResult {
  const body = result.structuredContent as { processes?: Array<{ process: string }>; process?: string }
  for (const task of body?.processes ?? []) tasks.seen(task.process, session)
  if (typeof body?.process === 'string') tasks.seen(body.process, session)
  return result
}
