import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import type { CgroupHost, KillMethod } from './host.js'
import { removeDir, writeTo } from './host.js'
import { pidsIn } from './internal/kill.js'
import { isSameProcess } from './procfs.js'

/**
 * What a run left in its cgroups, killed synchronously (the watchdog, and the next start's
 * recovery, run it where nothing may wait on the event loop). The run's record (`cgroups.json` in
 * its run directory) names its directories, the member hierarchy's first, and how to kill.
 */
export interface CgroupRecord {
  readonly dirs: readonly string[]
  readonly kill: KillMethod
}

const sleeper = new Int32Array(new SharedArrayBuffer(4))
const pause = (ms: number) => Atomics.wait(sleeper, 0, 0, ms)

function leaves(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
  } catch {
    return []
  }
}

/**
 * Kills every process in a run's cgroups and removes them; returns how many processes each leaf
 * (a launch id) held. Bounded: what is still there after two seconds stays for the next start.
 */
export function reapCgroups(
  record: CgroupRecord,
  spared: ReadonlySet<string> = new Set(),
): Map<string, number> {
  const killed = new Map<string, number>()
  const [member, ...others] = record.dirs
  if (member === undefined) return killed
  // A spared leaf (a kept process's, decision 0113) is left as it is, with its limits.
  const reaped = (dir: string) => leaves(dir).filter((leaf) => !spared.has(leaf))
  for (const leaf of reaped(member)) {
    const count = pidsIn(join(member, leaf)).length
    if (count > 0) killed.set(leaf, count)
  }
  const deadline = Date.now() + 2000
  if (record.kill === 'cgroup.kill') {
    if (spared.size === 0) writeTo(join(member, 'cgroup.kill'), '1')
    else for (const leaf of reaped(member)) writeTo(join(member, leaf, 'cgroup.kill'), '1')
  }
  const freezer = record.kill === 'freezer' ? others.find((dir) => dir.includes('freezer')) : undefined
  for (const leaf of reaped(member)) {
    const dir = join(member, leaf)
    const frozen =
      freezer !== undefined && writeTo(join(freezer, leaf, 'freezer.state'), 'FROZEN') === undefined
    while (Date.now() < deadline) {
      const pids = pidsIn(dir)
      if (pids.length === 0) break
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGKILL')
        } catch {
          // gone meanwhile
        }
      }
      if (frozen) writeTo(join(freezer, leaf, 'freezer.state'), 'THAWED')
      pause(2)
    }
  }
  for (const dir of record.dirs) {
    for (const leaf of reaped(dir)) {
      while (!removeDir(join(dir, leaf)) && Date.now() < deadline) pause(2)
    }
    removeDir(dir)
  }
  return killed
}

/** When a cgroup was made (a cgroup directory's mtime is its creation: children do not touch it). */
function madeAt(dir: string): number {
  try {
    return statSync(dir).mtimeMs
  } catch {
    return Date.now()
  }
}

/**
 * The run directories in toolvisor's subtrees whose runtime is gone (the name starts with its pid
 * and start time, as a run id does) and that no run record covers: another state directory's, or
 * one whose record was lost, made more than `graceMs` ago. Each is killed and removed; returns how
 * many processes were killed.
 */
export function reapOrphanCgroups(
  host: Extract<CgroupHost, { available: true }>,
  graceMs: number,
  spared: (run: string) => ReadonlySet<string> = () => new Set(),
): number {
  let count = 0
  const byRun = new Map<string, string[]>()
  for (const hierarchy of host.hierarchies) {
    for (const name of leaves(hierarchy.base)) {
      const match = /^(\d+)-(\d+)-/.exec(name)
      if (match === null || isSameProcess(Number(match[1]), match[2]!)) continue
      // A young run is left to its own state directory's next start, which reports what it kills.
      if (Date.now() - madeAt(join(hierarchy.base, name)) < graceMs) continue
      const dirs = byRun.get(name) ?? []
      dirs.push(join(hierarchy.base, name))
      byRun.set(name, dirs)
    }
  }
  for (const [name, dirs] of byRun) {
    // The member hierarchy first: the record's order.
    const ordered = host.hierarchies
      .map((hierarchy) => dirs.find((dir) => dir.startsWith(`${hierarchy.base}/`)))
      .filter((dir): dir is string => dir !== undefined)
    for (const n of reapCgroups({ dirs: ordered, kill: host.kill }, spared(name)).values()) count += n
  }
  return count
}
