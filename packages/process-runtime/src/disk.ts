import { type Dirent, existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { isSameProcess } from './procfs.js'
import type { OwnerRecord } from './recovery.js'

/** Spill files a finished process left, once nothing in this runtime refers to it any more. */
interface Released {
  readonly paths: readonly string[]
  readonly bytes: number
  readonly at: number
}

/**
 * The disk budget of the state directory (`stateBytes`): spill files and run directories are
 * pruned, oldest finished first, until what is kept fits. Never pruned: a run that is still alive
 * (another toolvisor), a process still running, or a spill file a result may still point to (the
 * process is still referred to, by a task, a caller, the retention of recent results). What is
 * pruned first: the directories of runs that ended (oldest first), then this run's spill files of
 * processes the garbage collector took. When pruning cannot get under the budget (everything left
 * is in use), nothing more is deleted and `usage()` says so.
 */
export class DiskBudget {
  readonly #stateDir: string
  readonly #ownRun: string
  readonly #budget: number
  readonly #released: Released[] = []
  readonly #registry = new FinalizationRegistry<Omit<Released, 'at'> & { readonly at: number }>((held) =>
    this.#release(held),
  )
  #own = 0

  constructor(options: { readonly stateDir: string; readonly ownRun: string; readonly budget: number }) {
    this.#stateDir = options.stateDir
    this.#ownRun = options.ownRun
    this.#budget = options.budget
    this.enforce()
  }

  /** Counts what a finished process spilled; its files become prunable once `owner` is collected. */
  finished(owner: object, spilled: { readonly paths: readonly string[]; readonly bytes: number }): void {
    if (spilled.paths.length === 0) return
    this.#own += spilled.bytes
    this.#registry.register(owner, { ...spilled, at: Date.now() })
    this.enforce()
  }

  /** The state directory's size against the budget (for `check --probe`). */
  usage(): { readonly path: string; readonly bytes: number; readonly budget: number } {
    return { path: this.#stateDir, bytes: sizeOf(join(this.#stateDir, 'runs')), budget: this.#budget }
  }

  /** Prunes until the state directory fits the budget, or nothing prunable is left. */
  enforce(): void {
    const others = this.#closedRuns()
    let total = this.#own + others.reduce((sum, run) => sum + run.bytes, 0)
    for (const run of others) {
      if (total <= this.#budget) return
      rmSync(run.dir, { recursive: true, force: true })
      total -= run.bytes
    }
    this.#released.sort((a, b) => a.at - b.at)
    while (total > this.#budget && this.#released.length > 0) {
      const oldest = this.#released.shift()!
      for (const path of oldest.paths) rmSync(path, { force: true })
      total -= oldest.bytes
      this.#own -= oldest.bytes
    }
  }

  #release(released: Released): void {
    this.#released.push(released)
    if (this.#own + this.#closedRuns().reduce((sum, run) => sum + run.bytes, 0) > this.#budget) this.enforce()
  }

  /** Runs other than this one that no live runtime owns, oldest first, with their sizes. */
  #closedRuns(): Array<{ readonly dir: string; readonly bytes: number; readonly at: number }> {
    const runs = join(this.#stateDir, 'runs')
    let names: string[]
    try {
      names = readdirSync(runs)
    } catch {
      return []
    }
    return names
      .filter((name) => name !== this.#ownRun && !ownedByLiveRuntime(join(runs, name)))
      .map((name) => {
        const dir = join(runs, name)
        return { dir, bytes: sizeOf(dir), at: mtimeOf(dir) }
      })
      .sort((a, b) => a.at - b.at)
  }
}

/** A run directory whose owner record names a live process: another toolvisor at work. */
function ownedByLiveRuntime(dir: string): boolean {
  const file = join(dir, 'owner.json')
  if (!existsSync(file)) return false
  try {
    const owner = JSON.parse(readFileSync(file, 'utf8')) as OwnerRecord
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
