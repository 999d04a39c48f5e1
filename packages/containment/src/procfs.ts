import { readdirSync, readFileSync } from 'node:fs'

/** What /proc says of a process: its parent, its group and its start time (clock ticks since boot). */
export interface ProcStat {
  /** One letter: R, S, D, Z (zombie), T, ... */
  readonly state: string
  readonly ppid: number
  readonly pgrp: number
  readonly startTime: string
}

/** Reads /proc/PID/stat; `undefined` when the process is gone. */
export function procStat(pid: number): ProcStat | undefined {
  let stat: string
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return undefined
  }
  return parseStat(stat)
}

/** The start time field of a /proc/PID/stat text. */
export function startTimeOf(stat: string): string | undefined {
  return parseStat(stat)?.startTime
}

function parseStat(stat: string): ProcStat | undefined {
  // The command name (field 2) may hold spaces and parentheses: fields resume after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  const pgrp = Number(fields[2])
  const startTime = fields[19]
  if (!Number.isInteger(pgrp) || startTime === undefined) return undefined
  return { state: fields[0] ?? '?', ppid: Number(fields[1]), pgrp, startTime }
}

/**
 * True when `pid` is alive (not a zombie) and is the very process that started at `startTime`
 * (not a reused pid).
 */
export function isSameProcess(pid: number, startTime: string): boolean {
  const stat = procStat(pid)
  return stat !== undefined && stat.state !== 'Z' && stat.startTime === startTime
}

/**
 * Every live process (other than this one) that has `name` in its environment and whose value
 * `accept` takes, as [pid, value] pairs. Processes that vanish or that this user cannot read are
 * skipped. One scan of /proc serves the reaper and `markedProcesses`.
 */
export function processesWithVariable(
  name: string,
  accept: (value: string) => boolean,
): Array<[number, string]> {
  let entries: string[]
  try {
    entries = readdirSync('/proc')
  } catch {
    return []
  }
  const prefix = `${name}=`
  const found: Array<[number, string]> = []
  for (const entry of entries) {
    const pid = Number(entry)
    if (!Number.isInteger(pid) || pid === process.pid) continue
    let environ: string
    try {
      environ = readFileSync(`/proc/${pid}/environ`, 'latin1')
    } catch {
      continue
    }
    for (const variable of environ.split('\0')) {
      if (variable.startsWith(prefix) && accept(variable.slice(prefix.length))) {
        found.push([pid, variable.slice(prefix.length)])
        break
      }
    }
  }
  return found
}

/** Whether live process `pid` (not a zombie) has `NAME=value` in its environment. */
export function hasVariable(pid: number, name: string, value: string): boolean {
  const stat = procStat(pid)
  if (stat === undefined || stat.state === 'Z') return false
  try {
    return readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(`${name}=${value}`)
  } catch {
    return false
  }
}

/** Pids of every process whose environment holds `NAME=value` exactly, by value. */
export function pidsWithEnv(name: string, values: ReadonlySet<string>): Map<string, number[]> {
  const found = new Map<string, number[]>()
  for (const [pid, value] of processesWithVariable(name, (v) => values.has(v))) {
    found.set(value, [...(found.get(value) ?? []), pid])
  }
  return found
}

/**
 * Pids of every live process whose `TOOLVISOR_PROCESS` marker starts with `prefix` (a run id, or
 * `runId/proc-N`): what a runtime started, including descendants that left the process group.
 * Used by tests and operators to prove nothing was left running. Zombies (already dead, not yet
 * reaped) are not counted.
 */
export function markedProcesses(prefix: string): number[] {
  return processesWithVariable('TOOLVISOR_PROCESS', (value) => value.startsWith(prefix))
    .map(([pid]) => pid)
    .filter((pid) => {
      const stat = procStat(pid)
      return stat !== undefined && stat.state !== 'Z'
    })
}
