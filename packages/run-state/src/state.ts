import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { closeSync, constants, existsSync, readFile, writeSync } from 'node:fs'
import type { Socket } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { procStat, startTimeOf } from '@toolvisor/containment'
import type { Placeholder } from '@toolvisor/launchers'
import { HeldDirectory } from './held-dir.js'
import { type LogRecord, MARKER_VARIABLE, type OwnerRecord, recoverDeadRuns } from './internal/recovery.js'
import type { LostProcess } from './lost.js'
import { trustStateDir } from './state-dir.js'

export { MARKER_VARIABLE }

let instances = 0

/** How long a process lives before its start time is read for the log. */
const START_TIME_DELAY_MS = 100

/**
 * The on-disk state of one runtime instance (`<stateDir>/runs/<runId>/`): who owns it, which
 * processes are running (an append-only log), and spill files. A watchdog process (spawned at
 * open, detached) holds a pipe from this process: when this process dies, even by SIGKILL, the
 * pipe closes and the watchdog kills every process the log says is still running.
 *
 * The run directory and its spill directory are held open from the moment they are made, and
 * every file of the run is opened through them without following a link (held-dir.ts): a run
 * directory renamed, and a link put at its path, take none of its writes (decision 0092).
 */
export class RunState {
  readonly runId: string
  /** The run directory's path (as reported; the files are opened through `#run`). */
  readonly dir: string
  /** Where the run's spill files are made. */
  readonly spill: HeldDirectory
  readonly #run: HeldDirectory
  /** The log, open for appending: one write per record, no open/close on the launch path. */
  readonly #logFd: number
  readonly #watchdog: ChildProcess | undefined
  readonly #lost: LostProcess[]
  /** Ids tracked and not yet untracked. */
  readonly #live = new Set<string>()
  #closed = false
  #waits = 0

  private constructor(stateDir: string, lost: LostProcess[]) {
    const self = procStat(process.pid)
    // The random part: two copies of this module in one process (two versions in node_modules)
    // count their instances apart, and a shared id would let one's sweep kill the other's tools.
    this.runId = `${process.pid}-${self?.startTime ?? Date.now()}-${++instances}-${randomBytes(4).toString('hex')}`
    this.dir = join(stateDir, 'runs', this.runId)
    const runs = HeldDirectory.open(join(stateDir, 'runs'))
    try {
      this.#run = runs.makeChild(this.runId)
    } finally {
      runs.close()
    }
    this.spill = this.#run.makeChild('spill')
    const owner: OwnerRecord = {
      pid: process.pid,
      start: self?.startTime ?? '',
      at: new Date().toISOString(),
    }
    this.#run.write('owner.json', JSON.stringify(owner))
    this.#logFd = this.#run.open('processes.log', constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT)
    this.#lost = lost
    this.#watchdog = startWatchdog(this.dir, this.#run)
  }

  /**
   * Checks that the state directory is toolvisor's alone (state-dir.ts: a RuntimeError when it is
   * not), recovers what dead runs left behind, then opens a new run.
   */
  static open(stateDir: string, retentionMs: number): RunState {
    const trusted = trustStateDir(stateDir)
    const lost = recoverDeadRuns(trusted, retentionMs)
    return new RunState(trusted, lost)
  }

  /** Processes of previous runs that were running when those runs died. */
  get lost(): readonly LostProcess[] {
    return this.#lost
  }

  /** The value of the marker variable for a process of this run. */
  marker(id: string): string {
    return `${this.runId}/${id}`
  }

  /**
   * Records a launch under way, its pid not known yet (the fork server answers it a moment later):
   * should the runtime die meanwhile, the watchdog still kills what carries its marker.
   */
  launching(id: string, tool: string): void {
    this.#append({ op: '+', id, pid: 0, start: '', tool, at: new Date().toISOString() })
  }

  /**
   * Records a spawned process. Its start time (what tells it from a later process with the same
   * pid) is read from /proc off the launch path, once the process has lived a moment (most
   * one-shot tools are gone by then and never cost the read); until it is recorded, the reaper
   * checks the run's marker in the process's environment instead.
   */
  track(id: string, pid: number, tool: string): void {
    this.#append({ op: '+', id, pid, start: '', tool, at: new Date().toISOString() })
    this.#live.add(id)
    const timer = setTimeout(() => {
      if (!this.#live.has(id)) return
      readFile(`/proc/${pid}/stat`, 'utf8', (error, text) => {
        const start = error ? undefined : startTimeOf(text)
        if (start !== undefined && this.#live.has(id)) this.#append({ op: '~', id, start })
      })
    }, START_TIME_DELAY_MS)
    timer.unref()
  }

  annotate(
    id: string,
    info: { readonly task?: string; readonly session?: string; readonly kind?: string },
  ): void {
    this.#append({ op: '@', id, ...info })
  }

  /**
   * Records the placeholders the launch of `id` may make (before its spawn): should the runtime die
   * without releasing them, the watchdog removes them once it killed the run's processes.
   */
  holding(id: string, placeholders: readonly Placeholder[]): void {
    for (const { path, kind } of placeholders) this.#append({ op: 'h', id, path, kind })
  }

  /** Writes a record of the run beside its log (`cgroups.json`: where its cgroups are, for the reap). */
  note(name: string, text: string): void {
    this.#run.write(name, text)
  }

  /**
   * Records that a task waits to start a process again (`Runtime.waiting`): a launch under way with
   * no pid, as far as the log goes, so a later start reports its task lost. Returns the release.
   */
  waiting(
    tool: string,
    info: { readonly task?: string; readonly session?: string; readonly kind?: string },
  ): () => void {
    const id = `wait-${++this.#waits}`
    this.launching(id, tool)
    this.annotate(id, info)
    let released = false
    return () => {
      if (released) return
      released = true
      this.untrack(id)
    }
  }

  untrack(id: string): void {
    this.#live.delete(id)
    this.#append({ op: '-', id })
  }

  /** Marks the run closed (nothing of it is lost, `kept`: but what runs on kept) and lets the watchdog go. */
  close(options: { readonly kept?: boolean } = {}): void {
    if (this.#closed) return
    this.#closed = true
    // With kept processes running on (decision 0113) the run stays open to the next start: it
    // spares those whose keeper lives, and kills and reports lost those whose keeper died meanwhile.
    if (!options.kept) {
      try {
        this.#run.rename('owner.json', 'closed.json')
      } catch {
        // already gone: nothing to mark
      }
    }
    this.#watchdog?.stdin?.end()
    closeSync(this.#logFd)
  }

  /**
   * Removes the run's directory when nothing of it is worth keeping: it closed cleanly and spilled
   * nothing (its log then says nothing a later start needs). Either way the directories are let
   * go: a finished process's spill file is read by its path from then on (never through a link).
   */
  removeIfEmpty(options: { readonly kept?: boolean } = {}): void {
    try {
      // A run with kept processes keeps its log for the next start (see `close`).
      if (!options.kept && this.spill.names().length === 0) {
        this.spill.close()
        this.#run.removeWhole()
      }
    } catch {
      // already gone
    } finally {
      this.spill.close()
      this.#run.close()
    }
  }

  #append(record: LogRecord): void {
    if (this.#closed) return
    writeSync(this.#logFd, `${JSON.stringify(record)}\n`)
  }
}

/** The watchdog, handed the run directory held (its fd 3): it reads the log of that very directory. */
function startWatchdog(runDir: string, held: HeldDirectory): ChildProcess | undefined {
  const script = fileURLToPath(new URL('./internal/watchdog.js', import.meta.url))
  if (!existsSync(script) || held.fd === undefined) return undefined
  const child = spawn(process.execPath, [script, runDir], {
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore', held.fd],
  })
  child.on('error', () => {})
  child.unref()
  // The pipe must not keep this process alive: it exists only to close when this process dies.
  ;(child.stdin as unknown as Socket | null)?.unref?.()
  return child
}
