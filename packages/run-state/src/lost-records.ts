import { join } from 'node:path'
import { HeldDirectory } from './held-dir.js'
import type { LostProcess } from './lost.js'
import { eachRun } from './state-dir.js'

/**
 * The records a dead run's directory keeps of what it lost (`lost.json`) and of which owners were
 * told (`told.json`), each written whole through the held run directory (decision 0092).
 */

const LOST_FILE = 'lost.json'

/**
 * Writes what a dead run lost into its directory (atomically), so that later starts, the owner
 * sessions that come back and `toolvisor check --probe` still know it, for as long as the run
 * directory is kept (`retentionMs`).
 */
export function keepLost(run: HeldDirectory, lost: readonly LostProcess[]): void {
  if (lost.length === 0) return
  try {
    run.replace(LOST_FILE, JSON.stringify(lost))
  } catch {
    // a full or read-only disk: this start still reports them
  }
}

const TOLD_FILE = 'told.json'

/**
 * Records that the owner session of a lost process was told: the ids of a run's `told.json`,
 * rewritten whole (write, rename) so a crash leaves the old list or the new one, never half.
 */
export function markTold(stateDir: string, lost: Pick<LostProcess, 'run' | 'id'>): void {
  let run: HeldDirectory
  try {
    run = HeldDirectory.open(join(stateDir, 'runs', lost.run))
  } catch {
    return // the run's directory was pruned meanwhile: nothing keeps the loss to tell again either
  }
  try {
    const told = toldIn(run)
    if (told.has(lost.id)) return
    told.add(lost.id)
    run.replace(TOLD_FILE, JSON.stringify([...told]))
  } catch {
    // a full or read-only disk: the owner is told again next time
  } finally {
    run.close()
  }
}

/** The ids of a run's lost processes whose owners were told. */
function toldIn(run: HeldDirectory): Set<string> {
  try {
    const ids = JSON.parse(run.read(TOLD_FILE).toString('utf8')) as unknown
    return new Set(Array.isArray(ids) ? ids.filter((id): id is string => typeof id === 'string') : [])
  } catch {
    return new Set()
  }
}

/** Every lost process the state directory still keeps a record of, oldest run first. */
export function keptLost(stateDir: string): LostProcess[] {
  const found: LostProcess[] = []
  eachRun(stateDir, (run) => {
    try {
      const records = JSON.parse(run.read(LOST_FILE).toString('utf8')) as LostProcess[]
      const told = toldIn(run)
      if (Array.isArray(records))
        found.push(...records.map((lost) => (told.has(lost.id) ? { ...lost, told: true } : lost)))
    } catch {
      // no record, or a torn one
    }
  })
  return found.sort((a, b) => a.startedAt.localeCompare(b.startedAt))
}
