import type { Lifecycle, SequencedEvent, TaskInfo, TaskRegistry } from '@toolvisor/process-runtime'
import { RuntimeError } from '@toolvisor/process-runtime'
import type { Tool, ToolCallContext, ToolResult } from '@toolvisor/toolbox'

/** How many events and stderr lines `status` shows; how many `tail` returns when `n` is absent. */
const STATUS_EVENTS = 10
const STATUS_STDERR = 10
const DEFAULT_TAIL = 20
/** The most `tail` returns at once. */
const MAX_TAIL = 1000

const commands = ['list', 'status', 'tail', 'stop'] as const
type Command = (typeof commands)[number]

interface Args {
  readonly command: Command
  readonly process?: string
  readonly n?: number
  readonly force?: boolean
}

/** The model-facing description (one tool for every family: spec §2.4, D6). */
const DESCRIPTION =
  'Manage the long-running processes and tasks of this session (stream calls, services, background ' +
  'commands). command "list": every one with tool, kind, status and age. "status": one process\'s ' +
  'counters, last events and last stderr lines. "tail": its last n events, oldest first. "stop": ' +
  'its declared cancel, then SIGKILL after its stop timeout (force: SIGKILL at once); the answer is ' +
  'how it exited. Answers are JSON.'

/**
 * The shared `processes` tool over the task registry. Every answer concerns only the calling
 * session's tasks (and those started with no session); another session's task is refused.
 */
export function processesTool(tasks: TaskRegistry): Tool {
  return {
    name: 'processes',
    description: DESCRIPTION,
    inputSchema: {
      type: 'object',
      properties: {
        command: { type: 'string', enum: [...commands], description: 'list, status, tail or stop' },
        process: { type: 'string', description: 'the process or task id (p1, t1, bash-1); not for list' },
        n: {
          type: 'integer',
          minimum: 1,
          maximum: MAX_TAIL,
          description: `tail: how many events (default ${DEFAULT_TAIL})`,
        },
        force: { type: 'boolean', description: 'stop: SIGKILL at once instead of the declared cancel' },
      },
      required: ['command'],
      additionalProperties: false,
    },
    async call(raw, ctx) {
      const args = parseArgs(raw)
      if (typeof args === 'string') return answer({ error: args }, true)
      try {
        return await run(tasks, args, ctx)
      } catch (error) {
        if (RuntimeError.is(error)) return answer({ error: error.message }, true)
        throw error
      }
    },
  }
}

function parseArgs(raw: unknown): Args | string {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return 'arguments must be an object'
  const { command, process, n, force } = raw as Record<string, unknown>
  if (typeof command !== 'string' || !(commands as readonly string[]).includes(command)) {
    return `command must be one of ${commands.join(', ')}; got ${JSON.stringify(command)}`
  }
  if (command !== 'list' && (typeof process !== 'string' || process.length === 0)) {
    return `${command} needs "process": the id of one of this session's processes (see command "list")`
  }
  if (n !== undefined && (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > MAX_TAIL)) {
    return `n must be an integer from 1 to ${MAX_TAIL}; got ${JSON.stringify(n)}`
  }
  if (force !== undefined && typeof force !== 'boolean')
    return `force must be true or false; got ${JSON.stringify(force)}`
  return {
    command: command as Command,
    ...(typeof process === 'string' ? { process } : {}),
    ...(typeof n === 'number' ? { n } : {}),
    ...(typeof force === 'boolean' ? { force } : {}),
  }
}

async function run(tasks: TaskRegistry, args: Args, ctx: ToolCallContext): Promise<ToolResult> {
  const session = ctx.sessionId
  switch (args.command) {
    case 'list':
      return answer({ processes: tasks.list(session).map(summary) })
    case 'status': {
      const task = tasks.get(args.process!, session)
      if (task.process === undefined)
        return answer({ ...summary(task), counters: null, events: [], stderr: [] })
      const process = tasks.process(task.id, session)
      return answer({
        ...summary(task),
        counters: process.counters(),
        events: process.tail(STATUS_EVENTS).map(eventOf),
        stderr: process.stderrLines(STATUS_STDERR),
      })
    }
    case 'tail': {
      const task = tasks.get(args.process!, session)
      const n = args.n ?? DEFAULT_TAIL
      const total = task.process === undefined ? 0 : tasks.process(task.id, session).counters().events
      const page = tasks.page(task.id, session, { offset: Math.max(0, total - n), max: n })
      return answer({
        process: task.id,
        status: statusOf(task.lifecycle),
        events: page.events.map(eventOf),
        total: page.total,
        ...(page.elided > 0 ? { elided: page.elided } : {}),
      })
    }
    case 'stop': {
      const exit = await tasks.cancel(args.process!, session, args.force ? { force: true } : {})
      return answer({
        process: args.process,
        status: exit.status,
        exitCode: exit.code,
        signal: exit.signal,
        reason: exit.reason,
        ...(exit.why ? { why: exit.why } : {}),
      })
    }
  }
}

/** One line of `list`. */
function summary(task: TaskInfo) {
  return {
    process: task.id,
    tool: task.tool,
    kind: task.kind,
    status: statusOf(task.lifecycle),
    since: task.startedAt.toISOString(),
    age: age(task),
    ...(task.visibility === 'all sessions' ? { visibility: 'all sessions' } : {}),
  }
}

/** `running`, `exited (0)`, `exited (SIGKILL)`, `failed: lost on restart`, ... */
export function statusOf(lifecycle: Lifecycle): string {
  switch (lifecycle.status) {
    case 'exited':
      return `exited (${lifecycle.code ?? lifecycle.signal})`
    case 'failed':
      return `failed: ${lifecycle.why}`
    default:
      return lifecycle.status
  }
}

function age(task: TaskInfo): string {
  const end = task.endedAt?.getTime() ?? Date.now()
  const seconds = Math.max(0, Math.round((end - task.startedAt.getTime()) / 1000))
  if (seconds < 120) return `${seconds}s`
  if (seconds < 7200) return `${Math.round(seconds / 60)}m`
  return `${Math.round(seconds / 3600)}h`
}

function eventOf(event: SequencedEvent): unknown {
  return Buffer.isBuffer(event.value) ? event.value.toString('utf8') : event.value
}

function answer(body: Record<string, unknown>, isError = false): ToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(body) }], isError, structuredContent: body }
}
