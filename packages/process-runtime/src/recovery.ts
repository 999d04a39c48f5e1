import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { LostProcess } from './lost.js'
import { hasVariable, isSameProcess, pidsWithEnv } from './procfs.js'

/**
 * What a run leaves on disk (`<stateDir>/runs/<runId>/processes.log`, one JSON record per line)
 * and what the next start, or the watchdog, makes of it when the run died: the processes it
 * still had, killed, and reported lost.
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
function liveRecords(runDir: string): LiveRecord[] {
  const live = new Map<string, LiveRecord>()
  let text = ''
  try {
    text = readFileSync(join(runDir, 'processes.log'), 'utf8')
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
    // annotated it meanwhile is kept.
    if (record.op === '+') live.set(record.id, { ...live.get(record.id), ...record })
    else if (record.op === '-') live.delete(record.id)
    else if (record.op === '~') {
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
export function reapRun(runDir: string, runId: string): Map<string, number> {
  const live = liveRecords(runDir)
  const killed = new Map<string, number>()
  if (live.length === 0) return killed
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
        count++
      } catch {
        // gone meanwhile
      }
    }
    killed.set(record.id, count)
  }
  const markers = new Set(live.map((record) => `${runId}/${record.id}`))
  // A process forked while a scan reads /proc (a tool's loop starting its next `sleep`) is not in
  // it: scan again until a scan finds nothing new (at most SCAN_PASSES).
  const signalled = new Set<number>()
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
  return killed
}

const LOST_FILE = 'lost.json'

/**
 * Writes what a dead run lost into its directory (atomically), so that later starts, the owner
 * sessions that come back and `toolvisor check --probe` still know it, for as long as the run
 * directory is kept (`retentionMs`).
 */
function keepLost(dir: string, lost: readonly LostProcess[]): void {
  if (lost.length === 0) return
  try {
    writeFileSync(join(dir, `${LOST_FILE}.tmp`), JSON.stringify(lost))
    renameSync(join(dir, `${LOST_FILE}.tmp`), join(dir, LOST_FILE))
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
  const dir = join(stateDir, 'runs', lost.run)
  const told = toldIn(dir)
  if (told.has(lost.id)) return
  told.add(lost.id)
  try {
    writeFileSync(join(dir, `${TOLD_FILE}.tmp`), JSON.stringify([...told]))
    renameSync(join(dir, `${TOLD_FILE}.tmp`), join(dir, TOLD_FILE))
  } catch {
    // the run's directory was pruned meanwhile: nothing keeps the loss to tell again either
  }
}

/** The ids of a run's lost processes whose owners were told. */
function toldIn(dir: string): Set<string> {
  try {
    const ids = JSON.parse(readFileSync(join(dir, TOLD_FILE), 'utf8')) as unknown
    return new Set(Array.isArray(ids) ? ids.filter((id): id is string => typeof id === 'string') : [])
  } catch {
    return new Set()
  }
}

/** Every lost process the state directory still keeps a record of, oldest run first. */
export function keptLost(stateDir: string): LostProcess[] {
  const runs = join(stateDir, 'runs')
  let names: string[]
  try {
    names = readdirSync(runs)
  } catch {
    return []
  }
  const found: LostProcess[] = []
  for (const runId of names) {
    try {
      const records = JSON.parse(readFileSync(join(runs, runId, LOST_FILE), 'utf8')) as LostProcess[]
      const told = toldIn(join(runs, runId))
      if (Array.isArray(records))
        found.push(...records.map((lost) => (told.has(lost.id) ? { ...lost, told: true } : lost)))
    } catch {
      // no record, or a torn one
    }
  }
  return found.sort((a, b) => a.startedAt.localeCompare(b.startedAt))
}

/** Recovers what dead runs left: kills their processes, reports them lost, prunes old runs. */
export function recoverDeadRuns(stateDir: string, retentionMs: number): LostProcess[] {
  const runs = join(stateDir, 'runs')
  const lost: LostProcess[] = []
  for (const runId of readdirSync(runs)) {
    const dir = join(runs, runId)
    const ownerFile = join(dir, 'owner.json')
    if (existsSync(ownerFile)) {
      let owner: OwnerRecord | undefined
      try {
        owner = JSON.parse(readFileSync(ownerFile, 'utf8')) as OwnerRecord
      } catch {
        owner = undefined
      }
      if (owner && isSameProcess(owner.pid, owner.start)) continue // a live runtime
      // Claim it atomically: two runtimes starting together must not both report it.
      const claimed = join(dir, 'closed.json')
      try {
        renameSync(ownerFile, claimed)
      } catch {
        continue
      }
      const records = liveRecords(dir)
      const killed = reapRun(dir, runId)
      const reportedAt = new Date().toISOString()
      const found: LostProcess[] = []
      for (const record of records) {
        found.push({
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
        })
      }
      keepLost(dir, found)
      lost.push(...found)
      continue
    }
    try {
      if (Date.now() - statSync(dir).mtimeMs > retentionMs) rmSync(dir, { recursive: true, force: true })
    } catch {
      // another runtime removed it
    }
  }
  return lost
}
