import { type Dirent, readdirSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { isSameProcess } from '@toolvisor/containment'
import type { HeldDirectory } from './held-dir.js'
import type { OwnerRecord } from './internal/recovery.js'
import type { SpillAllowance } from './spill-cut.js'
import { eachRun } from './state-dir.js'

/** Spill files a finished process left, once nothing in this runtime refers to it any more. */
interface Released {
  readonly remove: () => void
  readonly bytes: number
  readonly at: number
}

/** What the budget keeps of a finished process until the garbage collector takes it. */
interface Finished {
  readonly ledger: SpillLedger
  /** Removes the process's spill files (through the run's held spill directory). */
  readonly remove: () => void
  readonly at: number
}

/**
 * The disk budget of the state directory (`stateBytes`). Every spill write of this run asks it
 * first (`take`, through the process's `SpillLedger`): live spills count, of running processes and
 * of finished ones still referred to, so when the budget is spent a stream's spill is cut rather
 * than growing past it (decision 0092). To make room it prunes, oldest first: the directories of
 * runs that ended, then this run's spill files of processes the garbage collector took. Never
 * pruned: a run that is still alive (another toolvisor), a process still running, or a spill file
 * a result may still point to (the process is still referred to, by a task, a caller, the
 * retention of recent results). When pruning cannot make room, the write gets less, or nothing.
 */
export class DiskBudget {
  /** The budget, in bytes. */
  readonly budget: number
  readonly #stateDir: string
  readonly #ownRun: string
  readonly #released: Released[] = []
  readonly #registry = new FinalizationRegistry<Finished>((held) => this.#release(held))
  /** Bytes this run's spill writes took and that were not pruned since. */
  #own = 0
  /** Bytes of the runs that ended, as the last look found them (they do not grow). */
  #others = 0

  constructor(options: { readonly stateDir: string; readonly ownRun: string; readonly budget: number }) {
    this.#stateDir = options.stateDir
    this.#ownRun = options.ownRun
    this.budget = options.budget
    this.enforce()
  }

  /** A process's account with the budget: what its spill writes took, for its release later. */
  ledger(): SpillLedger {
    return new SpillLedger(this)
  }

  /**
   * Takes up to `bytes` for a spill write and returns how many may be written: all of them while
   * they fit, else what is left once what may be pruned was (0 when nothing is).
   */
  take(bytes: number): number {
    if (this.#own + this.#others + bytes <= this.budget) {
      this.#own += bytes
      return bytes
    }
    this.enforce(bytes)
    const granted = Math.max(0, Math.min(bytes, this.budget - this.#own - this.#others))
    this.#own += granted
    return granted
  }

  /** A process finished: its spill files become prunable once `owner` is collected. */
  finished(owner: object, spill: { readonly ledger: SpillLedger; readonly remove: () => void }): void {
    this.#registry.register(owner, { ...spill, at: Date.now() })
  }

  /** The state directory's size against the budget (for `check --probe`). */
  usage(): { readonly path: string; readonly bytes: number; readonly budget: number } {
    return { path: this.#stateDir, bytes: sizeOf(join(this.#stateDir, 'runs')), budget: this.budget }
  }

  /**
   * Prunes until the state directory fits the budget with `room` bytes to spare (a write that is
   * waiting for them), or nothing prunable is left.
   */
  enforce(room = 0): void {
    const limit = this.budget - room
    const others = this.#closedRuns()
    this.#others = others.reduce((sum, run) => sum + run.bytes, 0)
    for (const run of others) {
      if (this.#own + this.#others <= limit) return
      rmSync(run.dir, { recursive: true, force: true })
      this.#others -= run.bytes
    }
    this.#released.sort((a, b) => a.at - b.at)
    while (this.#own + this.#others > limit && this.#released.length > 0) {
      const oldest = this.#released.shift()!
      oldest.remove()
      this.#own -= oldest.bytes
    }
  }

  #release(held: Finished): void {
    if (held.ledger.taken === 0) return
    this.#released.push({ remove: held.remove, bytes: held.ledger.taken, at: held.at })
    if (this.#own + this.#others > this.budget) this.enforce()
  }

  /** Runs other than this one that no live runtime owns, oldest first, with their sizes. */
  #closedRuns(): Array<{ readonly dir: string; readonly bytes: number; readonly at: number }> {
    const runs = join(this.#stateDir, 'runs')
    const names: string[] = []
    eachRun(
      this.#stateDir,
      (run, name) => {
        if (name !== this.#ownRun && !ownedByLiveRuntime(run)) names.push(name)
      },
      (name) => names.push(name), // a link or a file in runs/ is no run: it is pruned (itself alone)
    )
    return names
      .map((name) => {
        const dir = join(runs, name)
        return { dir, bytes: sizeOf(dir), at: mtimeOf(dir) }
      })
      .sort((a, b) => a.at - b.at)
  }
}

/** One process's share of the budget: every spill write of its streams asks through it. */
export class SpillLedger implements SpillAllowance {
  readonly #disk: DiskBudget
  #taken = 0

  constructor(disk: DiskBudget) {
    this.#disk = disk
  }

  get budget(): number {
    return this.#disk.budget
  }

  /** Bytes its spill files were given. */
  get taken(): number {
    return this.#taken
  }

  take(bytes: number): number {
    const granted = this.#disk.take(bytes)
    this.#taken += granted
    return granted
  }
}

/** A run directory whose owner record names a live process: another toolvisor at work. */
function ownedByLiveRuntime(run: HeldDirectory): boolean {
  try {
    const owner = JSON.parse(run.read('owner.json').toString('utf8')) as OwnerRecord
    return isSameProcess(owner.pid, owner.start)
  } catch {
    return false
  }
}

function mtimeOf(path: string): number {
  try {
    return statSync(path).mtimeMs
  } catch {
    return 0
  }
}

/** Bytes of the files under `path` (0 when it is gone). */
export function sizeOf(path: string): number {
  let total = 0
  let entries: Dirent[]
  try {
    entries = readdirSync(path, { withFileTypes: true })
  } catch {
    return 0
  }
  for (const entry of entries) {
    const child = join(path, entry.name)
    if (entry.isDirectory()) total += sizeOf(child)
    else {
      try {
        total += statSync(child).size
      } catch {
        // removed meanwhile
      }
    }
  }
  return total
}
