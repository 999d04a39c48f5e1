import { closeSync, constants, readdirSync, readFileSync, writeFileSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { isSameProcess, procStat } from '@toolvisor/containment'
import type { Placeholder } from '@toolvisor/launchers'
import { HeldDirectory } from './held-dir.js'

/**
 * A kept process (issue 33, decision 0113): launched through a keeper (`@toolvisor/keeper`) whose
 * directory is `<stateDir>/keep/<key>/`; the runtime that launched it writes this record there
 * (`kept.json`) once it runs. While its keeper lives, neither the watchdog nor a later start kills
 * it, reaps its cgroup or reports it lost: it is a later daemon's to re-adopt.
 */
export interface KeptRecord {
  /** The keeper's directory. */
  readonly dir: string
  /** The run that launched it, and its id there (its cgroup leaf is named so). */
  readonly run: string
  readonly id: string
  readonly tool: string
  /** The launched process, and its keeper (pid and start time: a pid reused is not it). */
  readonly pid: number
  readonly keeper: number
  readonly keeperStart: string
  readonly startedAt: string
  /** Where its cgroup leaf is (the run and id that launched it), when it has one: it stays there for good. */
  readonly cgroup?: { readonly run: string; readonly leaf: string }
  /** When runtimes re-adopted it, oldest first. */
  readonly resumedAt?: readonly string[]
  readonly task?: string
  readonly session?: string
  readonly kind?: string
  /** What it was started with: its arguments and working directory (a later runtime starts nothing again: they are shown). */
  readonly argv?: readonly string[]
  readonly cwd?: string
  /** Its mail source's durable name (`@toolvisor/mailbox`), so a re-adopted process is mailed once. */
  readonly mail?: string
  /** Each reader's event and byte cursors in its task, so a reader goes on where it was after a re-adoption. */
  readonly cursors?: Readonly<Record<string, number>>
  readonly byteCursors?: Readonly<Record<string, readonly [number, number]>>
  /** What its launch's mechanism left on the host (`Launch.placeholders`): removed at its end, by whichever runtime holds it then. */
  readonly placeholders?: readonly Placeholder[]
  /** What its kind's handler needs to take it back (opaque here). */
  readonly handler?: Readonly<Record<string, unknown>>
}

/** Where a state directory's keepers are. */
export function keepRoot(stateDir: string): string {
  return join(stateDir, 'keep')
}

/** Writes the record of a kept process into its keeper's directory (`kept.json`, 0600). */
export function recordKept(record: Omit<KeptRecord, 'keeperStart'>): KeptRecord {
  const keeperStart = procStat(record.keeper)?.startTime ?? ''
  const kept = { ...record, keeperStart }
  writeFileSync(join(record.dir, 'kept.json'), JSON.stringify(kept), { mode: 0o600 })
  return kept
}

/** Every kept process of the state directory whose keeper still lives. */
export function keptAlive(stateDir: string): KeptRecord[] {
  const root = keepRoot(stateDir)
  let names: string[]
  try {
    names = readdirSync(root)
  } catch {
    return []
  }
  const found: KeptRecord[] = []
  for (const name of names) {
    if (!/^[0-9a-f]{16}$/.test(name)) continue
    try {
      const record = JSON.parse(readFileSync(join(root, name, 'kept.json'), 'utf8')) as KeptRecord
      if (record.keeperStart !== '' && isSameProcess(record.keeper, record.keeperStart))
        found.push({ ...record, dir: join(root, name) })
    } catch {
      // no record yet (a launch under way), or a torn one: not kept
    }
  }
  return found
}

/** Adds to the record of a kept process (its annotations: task, session, kind). */
export function updateKept(dir: string, patch: Partial<Omit<KeptRecord, 'dir'>>): void {
  try {
    const path = join(dir, 'kept.json')
    const record = JSON.parse(readFileSync(path, 'utf8')) as KeptRecord
    writeFileSync(path, JSON.stringify({ ...record, ...patch }), { mode: 0o600 })
  } catch {
    // its keeper released it meanwhile: nothing left to record
  }
}

/** What a reap of one run spares: the ids its log gives kept processes, and the cgroup leaves they hold. */
export interface Spared {
  readonly ids: ReadonlySet<string>
  readonly leaves: ReadonlySet<string>
}

/** What a reap of `run` spares: its kept processes whose keeper lives (decision 0113). */
export function sparedOf(stateDir: string, run: string, kept = keptAlive(stateDir)): Spared {
  return {
    ids: new Set(kept.filter((record) => record.run === run).map((record) => record.id)),
    leaves: new Set(kept.filter((record) => record.cgroup?.run === run).map((record) => record.cgroup!.leaf)),
  }
}

/** Spares nothing. */
export const NOTHING_SPARED: Spared = { ids: new Set(), leaves: new Set() }

/**
 * Ends record `id` in the log of the run that launched it (`run`), once another run took the
 * process over (`Runtime.adopt`): the process is that run's no more, so no later start reports it
 * lost there. A run already pruned has nothing to end.
 */
export function handedOver(stateDir: string, run: string, id: string): void {
  let held: HeldDirectory
  try {
    held = HeldDirectory.open(join(stateDir, 'runs', run))
  } catch {
    return
  }
  try {
    const fd = held.open('processes.log', constants.O_WRONLY | constants.O_APPEND)
    writeSync(fd, `${JSON.stringify({ op: '-', id })}\n`)
    closeSync(fd)
  } catch {
    // its log is gone: nothing lists it
  } finally {
    held.close()
  }
}
