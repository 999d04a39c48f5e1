import { join } from 'node:path'
import { kill as signal } from 'node:process'
import { type KillMethod, read, writeTo } from '../host.js'
import { procStat } from '../procfs.js'

/** How long a killed tree may take to be empty before the wait gives up (it is retried later). */
const EMPTY_MS = 2000

/** `key value` lines (memory.events, pids.events, cpu.stat, cgroup.events) as a map. */
export function keyed(text: string | undefined): Map<string, number> {
  const map = new Map<string, number>()
  for (const line of (text ?? '').split('\n')) {
    const [key, value] = line.split(' ')
    if (key && value !== undefined) map.set(key, Number(value))
  }
  return map
}

/** The pids a cgroup lists (`cgroup.procs`). */
export function pidsIn(dir: string): number[] {
  return (read(join(dir, 'cgroup.procs')) ?? '')
    .split('\n')
    .filter((line) => line !== '')
    .map(Number)
}

/**
 * Kills every process in the cgroup `dir` (the member leaf; with `cgroup.kill`, a run directory
 * and everything below it). `freezer`: the v1 freezer leaf of the same tree, frozen while its
 * members are signalled, so none forks past the kill.
 */
export async function killTree(dir: string, method: KillMethod, freezer?: string): Promise<void> {
  if (method === 'cgroup.kill' && writeTo(join(dir, 'cgroup.kill'), '1') === undefined) return
  const frozen = method === 'freezer' && freezer !== undefined && (await freeze(freezer))
  // Signalled until none is left: without a freezer a process may fork between a read and a kill.
  for (let pass = 0; pass < 100; pass++) {
    const pids = pidsIn(dir)
    if (pids.length === 0) break
    for (const pid of pids) {
      try {
        signal(pid, 'SIGKILL')
      } catch {
        // gone meanwhile
      }
    }
    if (frozen) break
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
  if (frozen) writeTo(join(freezer!, 'freezer.state'), 'THAWED')
}

async function freeze(dir: string): Promise<boolean> {
  if (writeTo(join(dir, 'freezer.state'), 'FROZEN') !== undefined) return false
  const deadline = Date.now() + EMPTY_MS
  while (Date.now() < deadline) {
    if ((read(join(dir, 'freezer.state')) ?? '').trim() === 'FROZEN') return true
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
  return true // FREEZING still: its members are signalled anyway, and a frozen task dies on thaw
}

/** Waits until the cgroup `dir` holds no process (v2: `populated 0`; v1: an empty cgroup.procs). */
export async function emptied(dir: string, within = EMPTY_MS): Promise<boolean> {
  const deadline = Date.now() + within
  const events = join(dir, 'cgroup.events')
  for (;;) {
    const text = read(events)
    const populated = text === undefined ? pidsIn(dir).some(alive) : keyed(text).get('populated') !== 0
    if (!populated) return true
    if (Date.now() >= deadline) return false
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
}

/** Running: a process with that pid that is not a zombie. */
export function alive(pid: number): boolean {
  const stat = procStat(pid)
  return stat !== undefined && stat.state !== 'Z'
}
