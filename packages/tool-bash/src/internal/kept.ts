import type { KeptRecord, ProcessRuntime } from '@toolvisor/process-runtime'
import { ensureSession, type Sessions, type TaskRegistry } from '@toolvisor/tasks'
import type { KeptAdopter } from '@toolvisor/toolbox'
import { SANDBOX_MODES, type SandboxMode } from '../modes.js'
import { BASH_TOOL, type Launcher } from './launcher.js'

/** What a kept background command's record says of how it was launched (`Launch.of` and its command). */
interface KeptBash {
  readonly mode?: SandboxMode
  readonly root: string
  readonly extra: readonly string[]
  readonly command: string
}

/**
 * Takes a kept background command an earlier daemon started back (decision 0113): its launch
 * prepared again as it was (the same mode, workspace and network names: refused, and the command
 * stopped, when the mechanism no longer honours them), the process through `runtime.adopt`, its
 * task under the same id and owner with its readers' cursors.
 */
export function bashAdopter(deps: {
  readonly runtime: ProcessRuntime
  readonly tasks: TaskRegistry
  readonly launcher: Launcher
  readonly sessions: () => Sessions | undefined
}): KeptAdopter {
  return async (record) => {
    const of = keptBash(record)
    const task = record.task
    if (of === undefined || task === undefined)
      throw new Error(`kept bash command (pid ${record.pid}) does not say how it was launched`)
    const launch = await deps.launcher.launchFor(of.mode, of.root, of.extra)
    const process = deps.runtime.adopt(record, {
      tool: launch.background,
      argv: record.argv ?? [],
      ...(record.cwd ? { cwd: record.cwd } : {}),
      resultBytes: 0,
    })
    const sessions = deps.sessions()
    if (sessions && record.session !== undefined) ensureSession(sessions, record.session)
    deps.tasks.add({
      kind: 'bash',
      tool: BASH_TOOL,
      label: of.command,
      id: task,
      start: () => process,
      ...(record.session !== undefined ? { owner: record.session } : {}),
      ...(record.cursors ? { cursors: record.cursors } : {}),
      ...(record.byteCursors ? { byteCursors: record.byteCursors } : {}),
    })
    deps.tasks.detach(task)
    await process.launched
  }
}

/** The record's launch, when it is one (the state directory is toolvisor's, but a torn file is not a launch). */
function keptBash(record: KeptRecord): KeptBash | undefined {
  const of = record.handler
  if (of === undefined || typeof of.root !== 'string' || typeof of.command !== 'string') return undefined
  const extra = Array.isArray(of.extra)
    ? of.extra.filter((name): name is string => typeof name === 'string')
    : []
  const mode = SANDBOX_MODES.find((known) => known === of.mode)
  return { root: of.root, command: of.command, extra, ...(mode ? { mode } : {}) }
}
