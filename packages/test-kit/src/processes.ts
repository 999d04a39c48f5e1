// The process scans a test ends with, to prove that nothing it started is still running: by a
// variable in the environment, by a run's cgroups, by the command line.
import { readdirSync, readFileSync } from 'node:fs'

import { processesWithVariable, procStat } from '@toolvisor/containment'

/**
 * Pids of the live processes (zombies excluded) whose environment holds `NAME=value`: how tests
 * prove that nothing they tagged is still running.
 */
export function processesWith(name: string, value: string): number[] {
  return processesWithVariable(name, (found) => found === value)
    .map(([pid]) => pid)
    .filter((pid) => {
      const stat = procStat(pid)
      return stat !== undefined && stat.state !== 'Z'
    })
}

/**
 * Pids of the live processes in a cgroup of run `runId` (in any hierarchy: its launches' trees, and
 * the fork server's child waiting in the tree made ahead), whatever they did to their environment.
 */
export function processesInRun(runId: string): number[] {
  const pids: number[] = []
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry)
    if (!Number.isInteger(pid)) continue
    try {
      if (procStat(pid)?.state === 'Z') continue
      if (readFileSync(`/proc/${pid}/cgroup`, 'utf8').includes(`/${runId}/`)) pids.push(pid)
    } catch {
      // exited meanwhile
    }
  }
  return pids
}

/** Pids of the live processes whose command line (arguments joined by spaces) contains `needle`. */
export function processesRunning(needle: string): number[] {
  const pids: number[] = []
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry)
    if (!Number.isInteger(pid) || pid === process.pid) continue
    try {
      const state = procStat(pid)?.state
      if (state === undefined || state === 'Z') continue
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').includes(needle)) pids.push(pid)
    } catch {
      // exited meanwhile
    }
  }
  return pids
}
