/**
 * The Claude-Code-like bash tools: profile `dsh`, the default, in the words of seed 001
 * (deepseek-harness's bash tools): `bash` (foreground, or `run_in_background`), `bash_output`,
 * `bash_kill`, with UI cards and sandbox escalation.
 */

import type { TaskInfo } from '@toolvisor/tasks'
import { required, type Tool, type ToolCallContext, type ToolResult } from '@toolvisor/toolbox'
import type { BashOptions } from '../config.js'
import {
  anyString,
  escalationMode,
  flag,
  invalid,
  networkNames,
  positive,
  sandboxMode,
  seconds,
  taskId,
  taskName,
  text,
} from '../internal/args.js'
import { callGrant } from '../internal/escalation.js'
import { outputText, renderRun, runEnd, spills, statusLine } from '../internal/render.js'
import { handOver } from '../internal/task-handover.js'
import { hintList } from '../network.js'
import { presentBashCall, presentBashResult, presentTaskCall, presentTaskResult } from '../present.js'
import {
  answer,
  type BashServices,
  bashTask,
  callWorkdir,
  readTask,
  runCommand,
  stopTask,
  taskDenial,
  waitInline,
} from './common.js'
import { asksNames } from './network-lines.js'
import { screenAnswer, TTY_FIELDS, terminalOf, terminalTask } from './terminal.js'
import { bashTool } from './tool.js'

/** The arguments of `bash`; the numbers the model reads are the configured ones. */
const bashFields = (options: BashOptions) => ({
  command: required(text('The bash command to run (`bash -c`).')),
  description: required(
    text('What the command does, in 5 to 10 words, active voice (shown to people; no effect on the run).'),
  ),
  timeoutMs: positive(
    `Foreground timeout in milliseconds (default ${options.defaultTimeoutMs}, at most ${options.maxTimeoutMs}: a larger one is cut).`,
  ),
  workdir: text(
    "Where to run it; a relative path is taken from the session's working directory (the default).",
  ),
  run_in_background: flag('Start it as a background task and return its id at once; no timeout applies.'),
  name: taskName(
    'With run_in_background: the task id to use (a-z, 0-9, -; at most 63), free again once its task ended.',
  ),
  wait_seconds: seconds(
    `With run_in_background: wait this long first (at most ${options.maxWaitSeconds} s); a command done by then answers in full.`,
  ),
  ...TTY_FIELDS,
  ...ESCALATION_FIELDS,
})

/**
 * Seed 001's escalation fields, and `network_allow` beside them (decision 0112): always taken (a
 * call that sends them without a sandbox gets the seed's "not available" text), shown only when
 * the standing mode confines (`network_allow` only when its network is an allow list).
 */
const ESCALATION_FIELDS = {
  sandbox_permissions: escalationMode(
    'The wider sandbox mode this exact command needs. Only as a one-shot retry of a command the sandbox ' +
      'just denied (`[sandbox: file access denied ...]`), the narrowest mode that suffices; requires ' +
      'justification, and the user approves it before it runs. A rejected escalation is final.',
  ),
  network_allow: networkNames(
    'Network names this exact command may also reach, for this call only: "registry.npmjs.org", "*.github.com", ' +
      '"host:port". Only as a one-shot retry of a command whose connections were blocked ' +
      '(`[network: blocked HOST:PORT, not in the allow list]`), the names it needs; requires justification, and ' +
      'the user approves them before it runs (with sandbox_permissions: one question for both).',
  ),
  justification: anyString(
    'Required with sandbox_permissions or network_allow: one sentence for the user on why this exact command needs the wider access.',
  ),
}

/**
 * The fields of `bash` the model is shown: without the escalation ones unless the mode confines,
 * without `network_allow` unless the standing network is an allow list.
 */
function shownFields(services: BashServices) {
  const { sandbox_permissions, network_allow, justification, ...plain } = bashFields(services.options)
  if (!services.modes.confining) return plain
  if (!asksNames(services)) return { ...plain, sandbox_permissions, justification }
  return { ...plain, sandbox_permissions, network_allow, justification }
}

/**
 * The dsh profile's network hint (decision 0112), after the file-denial hint's words: every host
 * blocked for not being in the allow list (at most 8, then how many more).
 */
export function dshNetworkHint(hosts: readonly string[]): string {
  return `[network: escalation available — retry this exact command once with network_allow ${hintList(hosts)} + justification; the approval prompt asks the user]`
}

const TASK_FIELDS = { task_id: taskId('The id `bash` returned for the background task (`bash-1`, ...).') }

/** Seed 001's `bash`: a foreground command, or a background task (named, waited for inline). */
export function dshBash(services: BashServices): Tool {
  return bashTool({
    name: 'bash',
    description:
      'Run a bash command (`bash -c`) and return its stdout, then its stderr after `[stderr]`. Every call is a ' +
      'fresh shell: nothing (cwd, variables) carries over, so pass `workdir` instead of `cd`. A non-zero exit ' +
      'shows as `[exit code: N]`, a timeout as `[timed out after Nms]`, a signal as `[killed by signal: SIG]`. ' +
      'Long output keeps its end and names a file with all of it. For a long-running command set ' +
      '`run_in_background`: read it with `bash_output`, stop it with `bash_kill`.',
    fields: bashFields(services.options),
    shown: shownFields(services),
    presentCall: presentBashCall,
    presentResult: presentBashResult,
    taskSupport: 'optional',
    async run(args, ctx) {
      // A call taken as a task (MCP Tasks) runs in the background: the task is the shell.
      const asTask = ctx.asTask
      const background = args.run_in_background === true || asTask !== undefined
      if (!background && args.name !== undefined)
        throw invalid('invalid name: only a background task has a name')
      if (!background && args.wait_seconds !== undefined) {
        throw invalid('invalid wait_seconds: only a background task is waited for (run_in_background: true)')
      }
      const started = async (task: TaskInfo) =>
        asTask !== undefined
          ? handOver(services, task, ctx, asTask)
          : ((await inline(services, task.id, args.wait_seconds ?? 0, ctx)) ??
            answer(`started background task ${task.id}`))
      // Approval (when asked for) comes before anything runs; a refusal is the call's answer.
      const place = { workdir: () => callWorkdir(services, args.workdir, ctx), background }
      const grant = await callGrant(args, ctx, {
        modes: services.modes,
        network: services.network,
        approval: services.approval(),
        place,
        fields: 'sandbox_permissions or network_allow',
      })
      const terminal = terminalOf(args)
      const call = { ...args, mode: grant.mode, network: grant.network, terminal }
      return runCommand(services, call, ctx, background ? started : undefined)
    },
  })
}

/** Seed 001's `bash_output`: what is new of a background task, and its status line. */
export function dshOutput(services: BashServices): Tool {
  return bashTool({
    name: 'bash_output',
    description:
      'Read a background task started by `bash` with `run_in_background`: only the output produced since your ' +
      'previous read (or `(no new output)`), then its status: `[status: running]`, `[status: killed]`, ' +
      '`[status: killed by SIG]` or `[status: completed, exit code: N]`. Poll again later for more.',
    fields: {
      ...TASK_FIELDS,
      screen: flag(
        'For a task on a terminal (tty): the screen a person would see now (its rows, the cursor, the title) instead of the new output.',
      ),
    },
    presentCall: (args) => presentTaskCall('Read output from', args),
    presentResult: (args, result) => presentTaskResult('Read output from', args, result),
    async run(args, ctx) {
      if (args.screen === true) {
        const screen = await screenAnswer(services, terminalTask(services, args.task_id, ctx))
        return answer(`${screen}\n${statusLine(bashTask(services, args.task_id, ctx.sessionId))}`)
      }
      const read = readTask(services, args.task_id, ctx)
      const lines = [outputText(read, services.render), ...taskDenial(services, read.task)]
      return answer(lines.join('\n'), false, spills(read))
    },
  })
}

/** Seed 001's `bash_kill`: the group's stop, then the answer. */
export function dshKill(services: BashServices): Tool {
  return bashTool({
    name: 'bash_kill',
    description:
      'Stop a background task started by `bash`: SIGTERM to its whole process group (and whatever it started ' +
      'that left the group), then SIGKILL after a grace period.',
    fields: TASK_FIELDS,
    presentCall: (args) => presentTaskCall('Kill', args),
    presentResult: (args, result) => presentTaskResult('Kill', args, result),
    async run({ task_id: id }, ctx) {
      const killed = await stopTask(services, id, ctx)
      return answer(killed ? `killed background task ${id}` : `task ${id} had already finished`)
    },
  })
}

/**
 * The inline wait of `wait_seconds`: the full result (seed 001's foreground text, its output read
 * for this session, so a later `bash_output` goes on from there) when the task ended within it.
 */
async function inline(
  services: BashServices,
  id: string,
  seconds: number,
  ctx: ToolCallContext,
): Promise<ToolResult | undefined> {
  const ended = await waitInline(services, id, seconds, ctx)
  if (ended === undefined) return undefined
  const read = readTask(services, id, ctx)
  const end = { ...runEnd(ended.exit!), sandbox: taskDenial(services, ended) }
  return answer(renderRun(read, end, services.render), false, { task: id, ...spills(read) })
}

/**
 * `bash_sandbox_mode { mode }` (decision 0035), served when the standing mode confines: sets the
 * calling session's standing mode to `mode`, never wider than it is (a wider mode is one command
 * at a time, asked for with `sandbox_permissions` and approved by the user).
 */
export function dshMode(services: BashServices): Tool {
  return bashTool({
    name: 'bash_sandbox_mode',
    description:
      "Lower this session's sandbox mode for every later bash command: read-only (nothing writable but a " +
      'private /tmp, where the sandbox has one) or workspace-write (the working directory and /tmp writable). A session cannot raise ' +
      'its mode: a command that needs more asks with sandbox_permissions.',
    fields: { mode: required(sandboxMode('The new, narrower or equal, mode.')) },
    async run({ mode }, ctx) {
      if (ctx.sessionId === undefined) throw invalid('invalid call: only a session has a standing mode')
      const was = services.modes.lower(ctx.sessionId, mode)
      return answer(`sandbox mode of this session: ${mode} (was ${was})`)
    },
  })
}
