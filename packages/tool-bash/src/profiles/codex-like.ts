/**
 * The Codex-like bash tools: profile `toolnexus`, in the words of seed 004 (toolnexus's Rust
 * builtins and their background shells): `bash` with `run_in_background`, `bash_output {id}`,
 * `kill_shell {id}`.
 */

import type { TaskInfo } from '@toolvisor/tasks'
import { required, type Tool } from '@toolvisor/toolbox'
import { flag, positive, taskId, text } from '../internal/args.js'
import { delta, spills, stopped } from '../internal/render.js'
import { answer, type BashServices, readTask, runCommand, stopTask } from './common.js'
import { screenAnswer, TTY_FIELDS, terminalOf, terminalTask } from './terminal.js'
import { bashTool } from './tool.js'

const ID_FIELDS = { id: taskId('The background shell id `bash` returned.') }

/** Seed 004's `bash`: a foreground command, or a background shell with `run_in_background`. */
export function toolnexusBash(services: BashServices): Tool {
  const { defaultTimeoutMs, maxTimeoutMs } = services.options
  return bashTool({
    name: 'bash',
    description:
      'Run a bash command and return its output. With `run_in_background: true` it returns at once with ' +
      'the id of a background shell: read it with `bash_output`, stop it with `kill_shell`.',
    fields: {
      command: required(text('The bash command to run (`bash -c`).')),
      description: text('What it does, in a few words (for people).'),
      timeout: positive(
        `Timeout in milliseconds (default ${defaultTimeoutMs}, at most ${maxTimeoutMs}); not for background shells.`,
      ),
      workdir: text("Where to run it (default: the session's working directory)."),
      run_in_background: flag('Start a background shell; no timeout applies.'),
      ...TTY_FIELDS,
    },
    async run(args, ctx) {
      const started = async ({ id }: TaskInfo) =>
        answer(`Started background shell ${id}. Read it with bash_output; stop it with kill_shell.`, false, {
          backgroundId: id,
        })
      // Seed 004's shells are `bg-...` (its tests probe `bg-nope`): `bg-1`, `bg-2`, ...
      const call = {
        command: args.command,
        workdir: args.workdir,
        timeoutMs: args.timeout,
        idPrefix: 'bg-',
        terminal: terminalOf(args),
      }
      return runCommand(services, call, ctx, args.run_in_background === true ? started : undefined)
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
      return answer(`${text}${toolnexusStatus(read.task)}`, false, spills(read))
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
