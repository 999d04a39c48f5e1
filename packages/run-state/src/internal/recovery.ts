import {
  type CgroupRecord,
  hasVariable,
  isSameProcess,
  pidsWithEnv,
  reapCgroups,
} from '@toolvisor/containment'
import type { Placeholder } from '@toolvisor/launchers'
import { removePlaceholder } from '@toolvisor/launchers'
import type { HeldDirectory } from '../held-dir.js'
import { keptAlive, NOTHING_SPARED, type Spared, sparedOf } from '../kept.js'
import type { LostProcess } from '../lost.js'
import { keepLost } from '../lost-records.js'
import { eachRun } from '../state-dir.js'

/**
 * What a run leaves on disk (`<stateDir>/runs/<runId>/processes.log`, one JSON record per line)
 * and what the next start, or the watchdog, makes of it when the run died: the processes it
 * still had, killed, and reported lost. Every run directory is held while it is read or written
 * (held-dir.ts): its files are opened through it, never through a link (decision 0092), and a
 * link in `runs/` is no run at all.
 */

/** The environment variable that marks every process a run started (and its descendants). */
export const MARKER_VARIABLE = 'TOOLVISOR_PROCESS'

/** One line of a run's process log. */
export type LogRecord =
  | {
      readonly op: '+'
      readonly id: string
      readonly pid: number
      readonly start: string
      readonly tool: string
      readonly at: string
    }
  | { readonly op: '-'; readonly id: string }
  /** A placeholder the launch of `id` may make (`Launch.placeholders`): removed when a dead run is reaped. */
  | { readonly op: 'h'; readonly id: string; readonly path: string; readonly kind: 'dir' | 'file' }
  | { readonly op: '~'; readonly id: string; readonly start: string }
  | {
      readonly op: '@'
      readonly id: string
      readonly task?: string
      readonly session?: string
      readonly kind?: string
    }

export interface OwnerRecord {
  readonly pid: number
  readonly start: string
  readonly at: string
}

interface LiveRecord {
  /** The placeholders its launch may have made. */
  placeholders?: Placeholder[]
  id: string
  pid: number
  start: string
  tool: string
  at: string
  task?: string
  session?: string
  kind?: string
}

/** The records of a run's log that have no end record. */
function liveRecords(run: HeldDirectory): LiveRecord[] {
  const live = new Map<string, LiveRecord>()
  let text = ''
  try {
    text = run.read('processes.log').toString('utf8')
  } catch {
    return []
  }
  for (const line of text.split('\n')) {
    if (line.length === 0) continue
    let record: LogRecord
    try {
      record = JSON.parse(line) as LogRecord
    } catch {
      continue // a torn last line after a crash
    }
    // A second '+' gives the pid of a launch recorded (by `launching`) before it had one; what
    // annotated it meanwhile is kept, and so is when it was asked for: launches answer in any order,
    // the lost are listed in the order they were started.
    if (record.op === '+') {
      const earlier = live.get(record.id)
      live.set(record.id, { ...earlier, ...record, ...(earlier ? { at: earlier.at } : {}) })
    } else if (record.op === '-') live.delete(record.id)
    else if (record.op === 'h') {
      const entry = live.get(record.id)
      if (entry)
        entry.placeholders = [...(entry.placeholders ?? []), { path: record.path, kind: record.kind }]
    } else if (record.op === '~') {
      const entry = live.get(record.id)
      if (entry) entry.start = record.start
    } else {
      const entry = live.get(record.id)
      if (entry)
        Object.assign(
          entry,
          record.task ? { task: record.task } : {},
          record.session ? { session: record.session } : {},
          record.kind ? { kind: record.kind } : {},
        )
    }
  }
  return [...live.values()]
}

/**
 * Scans of /proc for a marker at most, here and in the sweep (sweeper.ts): each after the first
 * finds what forked during the one before; past the bound, a fork bomb is the sandbox's to stop.
 */
export const SCAN_PASSES = 10

/**
 * Kills what a dead run left running and returns how many processes were killed per record: the
 * group of each recorded leader that is provably the same process (pid and start time), and every
 * process carrying the run's marker in its environment (descendants that left the group).
 */
export function reapRun(
  run: HeldDirectory,
  runId: string,
  spared: Spared = NOTHING_SPARED,
): Map<string, number> {
  // A kept process whose keeper lives is not the run's to kill (decision 0113): a later daemon re-adopts it.
  const live = liveRecords(run).filter((record) => !spared.ids.has(record.id))
  // Its cgroups first (decision 0097): everything a launch started is in them, whatever it shed.
  const killed = reapRecordedCgroups(run, spared.leaves)
  if (live.length === 0) return killed
  // A leader killed here may still be in /proc when the scan below reads it: it is not counted twice.
  const signalled = new Set<number>()
  for (const record of live) {
    let count = 0
    const marker = `${runId}/${record.id}`
    // pid 0: the launch was under way; the marker below finds what it started.
    const ours =
      record.pid <= 0
        ? false
        : record.start !== ''
          ? isSameProcess(record.pid, record.start)
          : hasVariable(record.pid, MARKER_VARIABLE, marker)
    if (ours) {
      try {
        process.kill(-record.pid, 'SIGKILL')
        signalled.add(record.pid)
        count++
      } catch {
        // gone meanwhile
      }
    }
    killed.set(record.id, (killed.get(record.id) ?? 0) + count)
  }
  const markers = new Set(live.map((record) => `${runId}/${record.id}`))
  // A process forked while a scan reads /proc (a tool's loop starting its next `sleep`) is not in
  // it: scan again until a scan finds nothing new (at most SCAN_PASSES).
  for (let pass = 0; pass < SCAN_PASSES; pass++) {
    let fresh = 0
    for (const [marker, pids] of pidsWithEnv(MARKER_VARIABLE, markers)) {
      const id = marker.slice(runId.length + 1)
      for (const pid of pids) {
        if (signalled.has(pid)) continue // killed, not yet gone
        signalled.add(pid)
        fresh++
        try {
          process.kill(pid, 'SIGKILL')
          killed.set(id, (killed.get(id) ?? 0) + 1)
        } catch {
          // gone meanwhile
        }
      }
    }
    if (fresh === 0) break
  }
  // Once nothing of the run lives, what its mechanisms left on the host for it is removed.
  for (const record of live)
    for (const placeholder of record.placeholders ?? []) removePlaceholder(placeholder)
  return killed
}

/** Kills what the run's cgroups hold (when it recorded any), per launch id. */
function reapRecordedCgroups(run: HeldDirectory, spared: ReadonlySet<string>): Map<string, number> {
  let record: CgroupRecord
  try {
    record = JSON.parse(run.read('cgroups.json').toString('utf8')) as CgroupRecord
  } catch {
    return new Map()
  }
  if (!Array.isArray(record.dirs) || record.dirs.some((dir) => typeof dir !== 'string')) return new Map()
  return reapCgroups(record, spared)
}

/** Recovers what dead runs left: kills their processes, reports them lost, prunes old runs. */
export function recoverDeadRuns(stateDir: string, retentionMs: number): LostProcess[] {
  const lost: LostProcess[] = []
  const kept = keptAlive(stateDir)
  eachRun(stateDir, (run, runId) => {
    const spared = sparedOf(stateDir, runId, kept)
    let text: string | undefined
    try {
      text = run.read('owner.json').toString('utf8')
    } catch {
      text = undefined // closed (or never opened): only its age matters
    }
    if (text !== undefined) {
      lost.push(...recoverRun(run, runId, text, spared))
      return
    }
    // A run with a kept process still alive stays: its cgroups' record and its log are still needed.
    if (spared.ids.size > 0 || spared.leaves.size > 0) return
    try {
      if (Date.now() - run.stat().mtimeMs > retentionMs) run.removeWhole()
    } catch {
      // another runtime removed it
    }
  })
  return lost
}

/** A run whose owner record is still there: nothing when its owner lives, else what it lost. */
function recoverRun(run: HeldDirectory, runId: string, ownerText: string, spared: Spared): LostProcess[] {
  let owner: OwnerRecord | undefined
  try {
    owner = JSON.parse(ownerText) as OwnerRecord
  } catch {
    owner = undefined
  }
  if (owner && isSameProcess(owner.pid, owner.start)) return [] // a live runtime
  // Claim it atomically: two runtimes starting together must not both report it.
  try {
    run.rename('owner.json', 'closed.json')
  } catch {
    return []
  }
  // What an earlier start reported of this run (one that kept it open for a kept process) is not reported again.
  const earlier = lostIn(run)
  const records = liveRecords(run).filter((record) => !spared.ids.has(record.id) && !earlier.has(record.id))
  const killed = reapRun(run, runId, spared)
  const reportedAt = new Date().toISOString()
  const found: LostProcess[] = records.map((record) => ({
    id: record.id,
    run: runId,
    tool: record.tool,
    pid: record.pid,
    startedAt: record.at,
    killed: killed.get(record.id) ?? 0,
    ...(record.task ? { task: record.task } : {}),
    ...(record.session ? { session: record.session } : {}),
    ...(record.kind ? { kind: record.kind } : {}),
    reportedAt,
  }))
  keepLost(run, [...earlier.values(), ...found])
  // A kept process still runs (decision 0113): the run stays open for the start that finds its keeper gone.
  if (spared.ids.size > 0) {
    try {
      run.rename('closed.json', 'owner.json')
    } catch {
      // gone meanwhile: nothing to reopen
    }
  }
  return found
}

/** The lost processes a run's directory already records, by id. */
function lostIn(run: HeldDirectory): Map<string, LostProcess> {
  try {
    const records = JSON.parse(run.read('lost.json').toString('utf8')) as LostProcess[]
    return new Map(Array.isArray(records) ? records.map((record) => [record.id, record]) : [])
  } catch {
    return new Map()
  }
}
