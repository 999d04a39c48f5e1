/**
 * The daemon-like bash tools: profile `hyperhive`, in the words of seed 002 (hyperhive's bash MCP
 * server, whose tasks outlive a client): `run`, `status`, `kill`, over the same tasks and launcher;
 * and `send`, which types into a task run on a terminal (issue 31).
 */
import { randomBytes } from 'node:crypto'
import { newestBytes } from '@toolvisor/process-runtime'
import { LOST_ON_RESTART, type TaskInfo, TasksError } from '@toolvisor/tasks'
import { required, type Tool, type ToolCallContext, type ToolResult } from '@toolvisor/toolbox'
import { anyString, flag, networkNames, positive, seconds, taskId, taskName, text } from '../internal/args.js'
import { callGrant } from '../internal/escalation.js'
import { stopped } from '../internal/render.js'
import { handOver } from '../internal/task-handover.js'
import { hintList } from '../network.js'
import {
  answer,
  type BashServices,
  bashTask,
  callWorkdir,
  commandOf,
  lineEnds,
  remember,
  stopTask,
  waitInline,
} from './common.js'
import { asksNames, taskBlocked } from './network-lines.js'
import { screenAnswer, terminalOf, terminalTask, ttyFields } from './terminal.js'
import { bashTool } from './tool.js'

/** How much of the end of each stream `status` shows (seed 002: the last 4 KiB). */
const TAIL_BYTES = 4096
/** `run`'s inline wait when the call names none (seed 002: 3 s). */
const DEFAULT_WAIT_SECONDS = 3

/** Seed 002's status of a task. */
export type HyperhiveStatus = 'pending' | 'running' | 'done' | 'timed_out' | 'interrupted' | 'killed'

/** What `status` answers (and a completion's mail holds): JSON. */
export interface HyperhiveReport {
  readonly id: string
  readonly status: HyperhiveStatus
  /** Set once it ended (null for a signal death: see `signal`). */
  readonly exit_code: number | null
  readonly signal?: string
  /** Why it could not start, when it could not. */
  readonly error?: string
  readonly duration_secs: number
  readonly stdout_tail: string
  readonly stderr_tail: string
  /** The files holding all of each stream (null: it wrote nothing). */
  readonly stdout_file: string | null
  readonly stderr_file: string | null
  /**
   * Once it ended, when its connections were blocked for not being in the allow list: how to
   * reach those names once (decision 0112; toolvisor's words, seed 002 has no allow list).
   */
  readonly network_hint?: string
}

/** hyperhive's `network_hint`: every host blocked for not being in the allow list (at most 8, then how many more). */
export function hyperhiveNetworkHint(hosts: readonly string[]): string {
  return `blocked: not in the allow list; to reach them once, run the same cmd again with network_allow ${hintList(hosts)} and a justification (the user approves them first)`
}

/**
 * The fields a hyperhive `run` asks for network names with (decision 0112): always taken, shown
 * when the standing network is an allow list.
 */
const NETWORK_FIELDS = {
  network_allow: networkNames(
    'Network names the command may also reach, for this run only ("registry.npmjs.org", "*.github.com", ' +
      '"host:port"): when a task was blocked (its network_hint), run the same cmd again with the names it ' +
      'needs and a justification; the user approves them first.',
  ),
  justification: anyString(
    'Required with network_allow: one sentence for the user on why the command needs them.',
  ),
}

/**
 * Seed 002's `run`: a background task, waited for inline (3 s by default).
 *
 * Longer than 60 lines: it is seed 002's `run` as one tool, its fields, its escalation (mode and
 * network names asked in one question) and its answer read top to bottom.
 */
export function hyperhiveRun(services: BashServices): Tool {
  const cap = services.options.maxWaitSeconds
  const fields = {
    cmd: required(text('The command.')),
    timeout_secs: positive('Kill it after this many seconds (status timed_out). Default: none.'),
    wait_seconds: seconds(`Inline wait before returning (default 3, at most ${cap}; 0: none).`),
    name: taskName('The task id to use (a-z, 0-9, -; at most 63), free again once its task ended.'),
    ...ttyFields(
      'Type into it with `send`; `status` with `screen: true` shows the screen a person would see.',
    ),
    ...NETWORK_FIELDS,
  }
  const { network_allow: _, justification: __, ...plain } = fields
  return bashTool({
    name: 'run',
    description:
      'Submit a shell command (run by bash) as a background task. By default waits 3 s inline: a command done ' +
      'by then answers with its full status, else the answer is `task started: id=<id>` and its completion ' +
      'arrives as mail. Poll with `status`, stop with `kill`. Taken as a task (MCP Tasks), it answers at once ' +
      'and the task ends with the full status.',
    fields,
    shown: asksNames(services) ? fields : plain,
    // Seed 002's one tool that starts long work: a call may run as a task (MCP Tasks, decision 0070).
    taskSupport: 'optional',
    async run(args, ctx) {
      const terminal = terminalOf(args)
      // Approval (when asked for) comes before anything runs; a refusal is the call's answer.
      const grant = await callGrant({ ...args, command: args.cmd }, ctx, {
        modes: services.modes,
        network: services.network,
        approval: services.approval(),
        place: { workdir: () => callWorkdir(services, undefined, ctx), background: true },
        fields: 'network_allow',
      })
      const command = await commandOf(services, {
        command: args.cmd,
        workdir: undefined,
        ctx,
        terminal,
        mode: grant.mode,
        network: grant.network,
      })
      // Past the session's cap the task waits as `pending` (seed 002), started when one ends.
      const deferred = !services.cap.admits(ctx.sessionId)
      // Seed 002: a name replaces "the auto-generated hex id".
      const task = await services.launcher.background(services.tasks, command, {
        name: args.name ?? hexId(),
        deferred,
        ...(args.timeout_secs !== undefined ? { timeoutMs: args.timeout_secs * 1000 } : {}),
      })
      remember(services, task.id, command.launch)
      if (deferred && ctx.sessionId !== undefined) services.cap.queue(ctx.sessionId, task.id)
      const asTask = ctx.asTask
      // Taken as a task: no inline wait; the task's answer is the status its end gives.
      if (asTask !== undefined) {
        const handed = handOver(services, task, ctx, asTask, (ended) => reportAnswer(services, ended, ctx))
        services.tasks.detach(task.id)
        return handed
      }
      const ended = await waitInline(services, task.id, args.wait_seconds ?? DEFAULT_WAIT_SECONDS, ctx)
      if (ended) return reportAnswer(services, ended, ctx)
      services.tasks.detach(task.id)
      return answer(`task started: id=${task.id}`)
    },
  })
}

/** Seed 002's `status`, waited for inline when asked. */
export function hyperhiveStatus(services: BashServices): Tool {
  const wait = `Wait up to this long for it to finish (at most ${services.options.maxWaitSeconds}).`
  const description =
    'The status of a task from `run`: pending, running, done, timed_out, interrupted (a restart killed it) or ' +
    'killed; its exit code, run duration, the last 4 KiB of stdout and stderr and the files with all of them. ' +
    'wait_seconds waits inline for it to finish first.'
  return bashTool({
    name: 'status',
    description,
    fields: {
      id: taskId('The task id from `run`.'),
      wait_seconds: seconds(wait),
      screen: flag(
        'For a task on a terminal (tty): add `screen`, what a person would see now (its rows, the cursor, the title).',
      ),
    },
    async run(args, ctx) {
      const task = bashTask(services, args.id, ctx.sessionId)
      const terminal = args.screen === true ? terminalTask(services, task.id, ctx) : undefined
      const ended = task.exit ? task : await waitInline(services, task.id, args.wait_seconds ?? 0, ctx)
      const screen = terminal && (await screenAnswer(services, terminal))
      return reportAnswer(services, ended ?? services.tasks.get(task.id, ctx.sessionId), ctx, screen)
    },
  })
}

/** Seed 002's `kill`: fire and forget. */
export function hyperhiveKill(services: BashServices): Tool {
  return bashTool({
    name: 'kill',
    description:
      'Stop a task from `run`: SIGINT to its whole process group (force: SIGKILL); returns at once, the end ' +
      'arrives as mail. A task that ignores SIGINT gets SIGKILL after a grace period.',
    fields: {
      id: taskId('The task id from `run`.'),
      force: flag('SIGKILL at once instead of SIGINT.'),
    },
    async run({ id, force }, ctx) {
      // A pending task is cancelled before it starts (seed 002) and ends as killed: this answer
      // shows that end, so no mail of it follows (decision 0104).
      if (bashTask(services, id, ctx.sessionId).lifecycle.status === 'pending') {
        await services.tasks.cancel(id, ctx.sessionId)
        services.tasks.seen(id, ctx.sessionId)
        return answer(`cancelled task ${id} before it started`)
      }
      // Fire and forget (seed 002): the end arrives as mail.
      const sent = await stopTask(services, id, ctx, { force: force === true, detach: true })
      return answer(
        sent ? `sent ${force ? 'SIGKILL' : 'SIGINT'} to task ${id}` : `task ${id} had already finished`,
      )
    },
  })
}

function reportAnswer(
  services: BashServices,
  task: TaskInfo,
  ctx: ToolCallContext,
  screen?: string | undefined,
): ToolResult {
  const report = {
    ...hyperhiveReport(services, task, ctx.sessionId),
    ...(screen !== undefined ? { screen } : {}),
  }
  if (task.exit !== undefined) services.tasks.seen(task.id, ctx.sessionId)
  return { ...answer(services.render.json(report)), structuredContent: report }
}

/** Seed 002's status of a task, read as `session` (the registry's fence applies). */
export function hyperhiveReport(
  services: BashServices,
  task: TaskInfo,
  session: string | undefined,
): HyperhiveReport {
  const exit = task.exit
  const tails = tailsOf(services, task.id, session)
  const ended = exit?.at ?? new Date()
  const blocked = taskBlocked(services, task)
  return {
    id: task.id,
    status: statusOf(task),
    exit_code: exit?.code ?? null,
    ...(exit?.signal ? { signal: exit.signal } : {}),
    ...(exit?.status === 'failed' && exit.why !== LOST_ON_RESTART ? { error: exit.why ?? 'failed' } : {}),
    duration_secs: Math.max(0, ended.getTime() - task.startedAt.getTime()) / 1000,
    ...tails,
    ...(blocked.length > 0 ? { network_hint: hyperhiveNetworkHint(blocked) } : {}),
  }
}

function statusOf(task: TaskInfo): HyperhiveStatus {
  const exit = task.exit
  // Queued behind the session's cap, or not yet running: seed 002's `pending`.
  if (exit === undefined)
    return ['pending', 'starting'].includes(task.lifecycle.status) ? 'pending' : 'running'
  if (exit.why === LOST_ON_RESTART) return 'interrupted'
  if (exit.reason === 'timeout') return 'timed_out'
  if (exit.status !== 'failed' && stopped(exit)) return 'killed'
  return 'done'
}

type Tails = Pick<HyperhiveReport, 'stdout_tail' | 'stderr_tail' | 'stdout_file' | 'stderr_file'>

function tailsOf(services: BashServices, id: string, session: string | undefined): Tails {
  let process: ReturnType<BashServices['tasks']['process']>
  try {
    process = services.tasks.process(id, session)
  } catch (error) {
    // A task a restart lost, or one that never started (pending, or cancelled so), has no output.
    if (TasksError.is(error) && ['TASKS_ERR_TASK_LOST', 'TASKS_ERR_TASK_PENDING'].includes(error.code)) {
      return { stdout_tail: '', stderr_tail: '', stdout_file: null, stderr_file: null }
    }
    throw error
  }
  const final = process.lifecycle.status === 'exited' || process.lifecycle.status === 'failed'
  const tail = (stream: 'stdout' | 'stderr') =>
    newestBytes(process.output, stream, { from: 0, max: TAIL_BYTES, utf8: true, final })
  // On a terminal: its CR LF line ends read as lines, as the other profiles show them.
  const [out, err] = [process.terminal ? lineEnds(tail('stdout')) : tail('stdout'), tail('stderr')]
  return {
    stdout_tail: out.bytes.toString('utf8'),
    stderr_tail: err.bytes.toString('utf8'),
    stdout_file: out.spillPath ?? null,
    stderr_file: err.spillPath ?? null,
  }
}

/**
 * Seed 002's auto-generated id: 8 hex digits (`3f9a1c2e`), random, so no two runs of the server
 * hand out the same one and nothing can be guessed from it.
 */
function hexId(): string {
  return randomBytes(4).toString('hex')
}
