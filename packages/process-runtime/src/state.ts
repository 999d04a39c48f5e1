import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFile,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs'
import type { Socket } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { procStat, startTimeOf } from './procfs.js'
import { type LogRecord, MARKER_VARIABLE, type OwnerRecord, recoverDeadRuns } from './recovery.js'
import type { LostProcess } from './types.js'

export { MARKER_VARIABLE }

let instances = 0

/** How long a process lives before its start time is read for the log. */
const START_TIME_DELAY_MS = 100

/**
 * The on-disk state of one runtime instance (`<stateDir>/runs/<runId>/`): who owns it, which
 * processes are running (an append-only log), and spill files. A watchdog process (spawned at
 * open, detached) holds a pipe from this process: when this process dies, even by SIGKILL, the
 * pipe closes and the watchdog kills every process the log says is still running.
 */
export class RunState {
  readonly runId: string
  readonly dir: string
  readonly spillDir: string
  readonly #log: string
  /** The log, open for appending: one write per record, no open/close on the launch path. */
  readonly #logFd: number
  readonly #owner: string
  readonly #watchdog: ChildProcess | undefined
  readonly #lost: LostProcess[]
  /** Ids tracked and not yet untracked. */
  readonly #live = new Set<string>()
  #closed = false

  private constructor(stateDir: string, lost: LostProcess[]) {
    const self = procStat(process.pid)
    // The random part: two copies of this module in one process (two versions in node_modules)
    // count their instances apart, and a shared id would let one's sweep kill the other's tools.
    this.runId = `${process.pid}-${self?.startTime ?? Date.now()}-${++instances}-${randomBytes(4).toString('hex')}`
    this.dir = join(stateDir, 'runs', this.runId)
    this.spillDir = join(this.dir, 'spill')
    this.#log = join(this.dir, 'processes.log')
    this.#owner = join(this.dir, 'owner.json')
    mkdirSync(this.spillDir, { recursive: true, mode: 0o700 })
    const owner: OwnerRecord = {
      pid: process.pid,
      start: self?.startTime ?? '',
      at: new Date().toISOString(),
    }
    writeFileSync(this.#owner, JSON.stringify(owner))
    this.#logFd = openSync(this.#log, 'a')
    this.#lost = lost
    this.#watchdog = startWatchdog(this.dir)
  }

  /** Recovers what dead runs left behind, then opens a new run. */
  static open(stateDir: string, retentionMs: number): RunState {
    mkdirSync(join(stateDir, 'runs'), { recursive: true, mode: 0o700 })
    const lost = recoverDeadRuns(stateDir, retentionMs)
    return new RunState(stateDir, lost)
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

  untrack(id: string): void {
    this.#live.delete(id)
    this.#append({ op: '-', id })
  }

  /** Marks the run closed (nothing of it is lost) and lets the watchdog go. */
  close(): void {
    if (this.#closed) return
    this.#closed = true
    try {
      renameSync(this.#owner, join(this.dir, 'closed.json'))
    } catch {
      // already gone: nothing to mark
    }
    this.#watchdog?.stdin?.end()
    closeSync(this.#logFd)
  }

  /**
   * Removes the run's directory when nothing of it is worth keeping: it closed cleanly and spilled
   * nothing (its log then says nothing a later start needs).
   */
  removeIfEmpty(): void {
    try {
      if (readdirSync(this.spillDir).length === 0) rmSync(this.dir, { recursive: true, force: true })
    } catch {
      // already gone
    }
  }

  #append(record: LogRecord): void {
    if (this.#closed) return
    writeSync(this.#logFd, `${JSON.stringify(record)}\n`)
  }
}

function startWatchdog(runDir: string): ChildProcess | undefined {
  const script = fileURLToPath(new URL('./watchdog.js', import.meta.url))
  if (!existsSync(script)) return undefined
  const child = spawn(process.execPath, [script, runDir], {
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore'],
  })
  child.on('error', () => {})
  child.unref()
  // The pipe must not keep this process alive: it exists only to close when this process dies.
  ;(child.stdin as unknown as Socket | null)?.unref?.()
  return child
}
