/** The `toolnexus` profile (seed 004): `bash` with `run_in_background`, `bash_output {id}`, `kill_shell {id}`. */
import type { TaskInfo } from '@toolvisor/process-runtime'
import type { Tool } from '@toolvisor/toolbox'
import { delta, stopped } from './render.js'
import {
  answer,
  type BashServices,
  bashTask,
  bashTool,
  commandOf,
  foreground,
  spills,
  timeoutOf,
} from './shared.js'

const ID_FIELDS = {
  id: { kind: 'id', required: true, description: 'The background shell id `bash` returned.' },
} as const

/** The three tools of seed 004 over `services`. */
export function toolnexusTools(services: BashServices): Tool[] {
  return [bash(services), bashOutput(services), killShell(services)]
}

function bash(services: BashServices): Tool {
  const { defaultTimeoutMs, maxTimeoutMs } = services.options
  return bashTool({
    name: 'bash',
    description:
      'Run a bash command and return its output. With `run_in_background: true` it returns at once with ' +
      'the id of a background shell: read it with `bash_output`, stop it with `kill_shell`.',
    fields: {
      command: { kind: 'text', required: true, description: 'The bash command to run (`bash -c`).' },
      description: { kind: 'text', description: 'What it does, in a few words (for people).' },
      timeout: {
        kind: 'positive',
        description: `Timeout in milliseconds (default ${defaultTimeoutMs}, at most ${maxTimeoutMs}); not for background shells.`,
      },
      workdir: { kind: 'text', description: "Where to run it (default: the session's working directory)." },
      run_in_background: { kind: 'boolean', description: 'Start a background shell; no timeout applies.' },
    },
    async run(args, ctx) {
      const command = commandOf(services, { command: args.command, workdir: args.workdir, ctx })
      if (args.run_in_background !== true) {
        return foreground(services, command, timeoutOf(services.options, args.timeout))
      }
      const task = services.launcher.background(services.tasks, command)
      const text = `Started background shell ${task.id}. Read it with bash_output; stop it with kill_shell.`
      return answer(text, false, { backgroundId: task.id })
    },
  })
}

function bashOutput(services: BashServices): Tool {
  return bashTool({
    name: 'bash_output',
    description:
      'The output a background shell produced since the last read, then `[status: running]`, ' +
      '`[status: killed]` or `[status: exited with code N]` (N is -1 for a signal kill_shell did not send).',
    fields: ID_FIELDS,
    async run(args, ctx) {
      bashTask(services, args.id, ctx.sessionId)
      const read = services.tasks.readBytes(args.id, ctx.sessionId, {
        max: services.options.outputBytes,
        utf8: true,
      })
      const found = delta(read, services.render)
      let text = found.text
      if (text.length > 0 && !text.endsWith('\n')) text += '\n'
      if (found.dropped !== undefined) text += `${found.dropped}\n`
      return answer(`${text}${toolnexusStatus(read.task)}`, false, spills(read))
    },
  })
}

function killShell(services: BashServices): Tool {
  return bashTool({
    name: 'kill_shell',
    description: 'Stop a background shell: SIGTERM to its whole process group, a grace period, then SIGKILL.',
    fields: ID_FIELDS,
    async run(args, ctx) {
      const task = bashTask(services, args.id, ctx.sessionId)
      if (task.exit !== undefined) return answer(`Background shell ${task.id} had already exited`)
      await services.tasks.cancel(task.id, ctx.sessionId)
      return answer(`Killed background shell ${task.id}`)
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
