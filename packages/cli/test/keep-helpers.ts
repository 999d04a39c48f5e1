// What the `serve --keep-processes` tests look at from outside: the keepers of a state directory,
// the records they hold, whether a pid still runs; after each test whatever a keeper of theirs
// still holds is killed with it.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach } from 'vitest'

/** Whether a pid is a live process (a zombie is dead, only not yet reaped). */
export function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))
  } catch {
    return false
  }
}

/** The pids of the keepers of the state directory `state` (their command line names its `keep/`). */
export function keepersOf(state: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(`${state}/keep/`)
      } catch {
        return false
      }
    })
}

/** What a keeper's record says of the process it holds (run-state's `KeptRecord`, the fields read here). */
export interface Kept {
  readonly dir: string
  readonly pid: number
  readonly keeper: number
  readonly task?: string
  readonly session?: string
}

/** The records of the kept processes of the state directory (those whose record is written). */
export function keptRecords(state: string): Kept[] {
  const keep = join(state, 'keep')
  if (!existsSync(keep)) return []
  return readdirSync(keep)
    .filter((name) => /^[0-9a-f]{16}$/.test(name) && existsSync(join(keep, name, 'kept.json')))
    .map((name) => ({
      ...JSON.parse(readFileSync(join(keep, name, 'kept.json'), 'utf8')),
      dir: join(keep, name),
    }))
}

/** The record of the kept process of task `task` (or of the only one). */
export function keptOf(state: string, task?: string): Kept {
  const records = keptRecords(state).filter((record) => task === undefined || record.task === task)
  if (records.length !== 1) throw new Error(`${records.length} kept records for ${task ?? 'the state dir'}`)
  return records[0]!
}

/** The state directories of the tests' daemons: what their keepers hold is killed after each test. */
export const states: string[] = []
afterEach(() => {
  for (const state of states.splice(0)) {
    for (const keeper of keepersOf(state)) {
      for (const child of childrenOf(keeper)) kill(-child)
      kill(keeper)
    }
  }
})

export function kill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL')
  } catch {
    // gone
  }
}

function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number)
  } catch {
    return []
  }
}
