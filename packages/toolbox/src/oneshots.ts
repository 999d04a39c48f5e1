import type { ReadBackOf } from '@toolvisor/answers'
import { quoteInput } from '@toolvisor/answers'
import type { ManagedProcess } from '@toolvisor/process-runtime'
import { foreignTask } from '@toolvisor/tasks'
import { ToolboxError } from './errors.js'

/** How many cut oneshot calls stay readable (each keeps its process, and so its spill files). */
export const KEEP_ONESHOTS = 100

/**
 * The `oneshots` seam: the oneshot calls whose answer did not hold all of their output, by process
 * id (`meta.process` of the result, named by its note), so that the tool that reads it back
 * (`processes output`) can page the rest. The last `KEEP_ONESHOTS` (100) are kept. Owned like tasks: another session's is refused
 * with the same text.
 */
export interface Oneshots {
  /** Keeps a cut oneshot call's process, owned by `owner` (none: every session may read it). */
  add(process: ManagedProcess, owner: string | undefined): void
  /**
   * The process of a kept oneshot call that `session` may read. Throws `TASKS_ERR_FOREIGN_TASK`
   * for another session's, `TOOLBOX_ERR_UNKNOWN_PROCESS` for an id it does not keep.
   */
  get(id: string, session: string | undefined): ManagedProcess
}

/** Creates an empty record; `readBack` words, in its refusal of an unknown id, how to list the tasks. */
export function createOneshots(readBack: ReadBackOf = () => undefined): Oneshots {
  const kept = new Map<string, { readonly process: ManagedProcess; readonly owner: string | undefined }>()
  return {
    add(process, owner) {
      kept.set(process.id, { process, owner })
      if (kept.size > KEEP_ONESHOTS) kept.delete(kept.keys().next().value!)
    },
    get(id, session) {
      const entry = kept.get(id)
      if (entry === undefined) {
        throw new ToolboxError(
          'TOOLBOX_ERR_UNKNOWN_PROCESS',
          `no task or oneshot call ${quoteInput(id)} to read: ${listing(readBack)}` +
            `a oneshot result that was cut names its process (the last ${KEEP_ONESHOTS} are kept)`,
        )
      }
      if (entry.owner !== undefined && entry.owner !== session) throw foreignTask(id)
      return entry.process
    },
  }
}

function listing(readBack: ReadBackOf): string {
  const list = readBack()?.call({ command: 'list' })
  return list === undefined ? '' : `${list} lists the tasks, and `
}
