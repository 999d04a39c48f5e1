/**
 * The Codex-like bash tools: profile `toolnexus`, in the words of seed 004 (toolnexus's Rust
 * builtins and their background shells): `bash` with `run_in_background`, `bash_output {id}`,
 * `kill_shell {id}`.
 */

import type { TaskInfo } from '@toolvisor/tasks'
import { required, type Tool } from '@toolvisor/toolbox'
import { anyString, flag, networkNames, positive, taskId, text } from '../internal/args.js'
import { callGrant } from '../internal/escalation.js'
import { delta, spills, stopped } from '../internal/render.js'
import { hintList } from '../network.js'
import { answer, type BashServices, callWorkdir, readTask, runCommand, stopTask } from './common.js'
import { asksNames, taskNetworkHint } from './network-lines.js'
import { screenAnswer, TTY_FIELDS, terminalOf, terminalTask } from './terminal.js'
import { bashTool } from './tool.js'

const ID_FIELDS = { id: taskId('The background shell id `bash` returned.') }

/**
 * The fields a toolnexus call asks for network names with (decision 0112; seed 004 has none):
 * always taken, shown when the standing network is an allow list.
 */
const NETWORK_FIELDS = {
  network_allow: networkNames(
    'Network names the command may also reach, for this run only ("registry.npmjs.org", "*.github.com", ' +
      '"host:port"): when a run was blocked (`[network: blocked HOST:PORT, not in the allow list]`), run the ' +
      'same command again with the names it needs and a justification; the user approves them first.',
  ),
  justification: anyString(
    'Required with network_allow: one sentence for the user on why the command needs them.',
  ),
}

/** Seed 004's words for a blocked name, toolvisor's (seed 004 has no allow list): every host, at most 8. */
export function toolnexusNetworkHint(hosts: readonly string[]): string {
  return `[network: blocked names can be allowed for one run — call bash again with the same command, network_allow ${hintList(hosts)} and a justification; the user approves them first]`
}

/** Seed 004's `bash`: a foreground command, or a background shell with `run_in_background`. */
export function toolnexusBash(services: BashServices): Tool {
  const { defaultTimeoutMs, maxTimeoutMs } = services.options
  const fields = {
    command: required(text('The bash command to run (`bash -c`).')),
    description: text('What it does, in a few words (for people).'),
    timeout: positive(
      `Timeout in milliseconds (default ${defaultTimeoutMs}, at most ${maxTimeoutMs}); not for background shells.`,
    ),
    workdir: text("Where to run it (default: the session's working directory)."),
    run_in_background: flag('Start a background shell; no timeout applies.'),
    ...TTY_FIELDS,
    ...NETWORK_FIELDS,
  }
  const { network_allow: _, justification: __, ...plain } = fields
  return bashTool({
    name: 'bash',
    description:
      'Run a bash command and return its output. With `run_in_background: true` it returns at once with ' +
      'the id of a background shell: read it with `bash_output`, stop it with `kill_shell`.',
    fields,
    shown: asksNames(services) ? fields : plain,
    async run(args, ctx) {
      const started = async ({ id }: TaskInfo) =>
        answer(`Started background shell ${id}. Read it with bash_output; stop it with kill_shell.`, false, {
          backgroundId: id,
        })
      const background = args.run_in_background === true
      // Approval (when asked for) comes before anything runs; a refusal is the call's answer.
      const grant = await callGrant(args, ctx, {
        modes: services.modes,
        network: services.network,
        approval: services.approval(),
        place: { workdir: () => callWorkdir(services, args.workdir, ctx), background },
        fields: 'network_allow',
      })
      // Seed 004's shells are `bg-...` (its tests probe `bg-nope`): `bg-1`, `bg-2`, ...
      const call = {
        command: args.command,
        workdir: args.workdir,
        timeoutMs: args.timeout,
        idPrefix: 'bg-',
        terminal: terminalOf(args),
        mode: grant.mode,
        network: grant.network,
      }
      return runCommand(services, call, ctx, background ? started : undefined)
    },
  })
}

/** Seed 004's `bash_output`: what is new of a background shell, then its status. */
export function toolnexusOutput(services: BashServices): Tool {
  return bashTool({
    name: 'bash_output',
    description:
      'The output a background shell produced since the last read, then `[status: running]`, ' +
      '`[status: killed]` or `[status: exited with code N]` (N is -1 for a signal kill_shell did not send).',
    fields: {
      ...ID_FIELDS,
      screen: flag(
        'For a shell on a terminal (tty): the screen a person would see now instead of the new output.',
      ),
    },
    async run(args, ctx) {
      if (args.screen === true) {
        const screen = await screenAnswer(services, terminalTask(services, args.id, ctx))
        return answer(`${screen}\n${toolnexusStatus(services.tasks.get(args.id, ctx.sessionId))}`)
      }
      const read = readTask(services, args.id, ctx)
      const found = delta(read, services.render)
      let text = found.text
      if (text.length > 0 && !text.endsWith('\n')) text += '\n'
      if (found.dropped !== undefined) text += `${found.dropped}\n`
      // Once it ended, a blocked name's hint follows its status (decision 0112).
      const lines = [`${text}${toolnexusStatus(read.task)}`, ...taskNetworkHint(services, read.task)]
      return answer(lines.join('\n'), false, spills(read))
    },
  })
}

/** Seed 004's `kill_shell`. */
export function toolnexusKill(services: BashServices): Tool {
  return bashTool({
    name: 'kill_shell',
    description: 'Stop a background shell: SIGTERM to its whole process group, a grace period, then SIGKILL.',
    fields: ID_FIELDS,
    async run({ id }, ctx) {
      const killed = await stopTask(services, id, ctx)
      return answer(killed ? `Killed background shell ${id}` : `Background shell ${id} had already exited`)
    },
  })
}

/** `[status: running]`, `[status: killed]` (stopped on purpose) or `[status: exited with code N]`. */
export function toolnexusStatus(task: TaskInfo): string {
  const exit = task.exit
  if (exit === undefined) return '[status: running]'
  if (stopped(exit)) return '[status: killed]'
  return `[status: exited with code ${exit.code ?? -1}]`
}
