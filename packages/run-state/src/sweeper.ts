import { readFileSync } from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'
import { procStat } from '@toolvisor/containment'
import { SCAN_PASSES } from './internal/recovery.js'
import { MARKER_VARIABLE } from './state.js'

/** How long processes are collected before one scan of /proc covers them all, when a caller waits. */
const BATCH_MS = 20
/**
 * How long, when nobody waits: a tool that ended by itself and whose pipes closed (nothing it
 * left holds them). On a machine that starts hundreds of processes a second a scan reads dozens
 * of environments, so sequential short calls share one scan instead of paying one each.
 */
const LAZY_MS = 200
/** How long a scan waits for what it killed to be dead. */
const GONE_MS = 1000

/** How soon a sweep is needed: `soon` when a caller waits for it, `lazy` when it is cleanup only. */
export type SweepUrgency = 'soon' | 'lazy'

/**
 * Kills what a process started that left its process group (`setsid cmd &`, a daemonizing tool):
 * the group kill cannot reach it, the run's marker (`TOOLVISOR_PROCESS=<runId>/<procId>`, in the
 * environment of everything the tool starts) finds it. Scans run off the launch path, asynchronously,
 * batched: one scan of /proc for every process that ended within a few milliseconds of another
 * (or, for cleanup nobody waits for, within `LAZY_MS`, 200 ms).
 */
export class Sweeper {
  readonly #runId: string
  /** Ids waiting for the next scan, with the pid each was spawned as. */
  #pending = new Map<string, number>()
  #scan: Promise<void> | undefined
  #begin: (() => void) | undefined
  #timer: NodeJS.Timeout | undefined
  /** When the pending scan is due (ms since the epoch). */
  #due = 0
  #running: Promise<void> = Promise.resolve()

  constructor(runId: string) {
    this.#runId = runId
  }

  /**
   * Kills what process `id` (spawned as `pid`) left outside its group; resolves when the scan that
   * covered it is done. A process that never got a pid started nothing. A `soon` sweep brings a
   * pending `lazy` scan forward.
   */
  sweep(id: string, pid: number | undefined, urgency: SweepUrgency = 'soon'): Promise<void> {
    if (pid === undefined) return this.#scan ?? this.#running
    this.#pending.set(id, Math.min(pid, this.#pending.get(id) ?? pid))
    this.#scan ??= new Promise<void>((resolve) => {
      this.#begin = resolve
    }).then(() => {
      const pending = this.#pending
      this.#pending = new Map()
      this.#scan = undefined
      this.#running = this.#running.then(() => killMarked(this.#runId, pending))
      return this.#running
    })
    this.#schedule(Date.now() + (urgency === 'soon' ? BATCH_MS : LAZY_MS))
    return this.#scan
  }

  /** Runs every scan asked for, now, and resolves once they are done. */
  async idle(): Promise<void> {
    while (this.#scan !== undefined) {
      this.#schedule(Date.now())
      await this.#scan
    }
    await this.#running
  }

  /** Starts the pending scan at `at`, unless it is due earlier already. */
  #schedule(at: number): void {
    if (this.#timer !== undefined && this.#due <= at) return
    clearTimeout(this.#timer)
    this.#due = at
    this.#timer = setTimeout(
      () => {
        this.#timer = undefined
        this.#begin?.()
      },
      Math.max(0, at - Date.now()),
    )
  }
}

/**
 * How many processes one turn of the event loop reads before the scan lets others run: a read is
 * 10 to 30 µs, so a turn stays well under a millisecond and a call that ends meanwhile is not held
 * behind a whole scan (on a busy machine with pids wrapping, a scan reads every process).
 */
const CHUNK = 16

/**
 * SIGKILLs every live process whose marker is `<runId>/<id>` for an id of `pending`. What a process
 * started got a pid after its own, so only pids from the smallest spawned pid up to the last one
 * the kernel handed out are read (all of them when pids wrapped around meanwhile). Each
 * environment is read synchronously and searched for the marker alone: on a machine that starts
 * hundreds of processes a second, a scan reads dozens, and promises per file cost more than the
 * reads; the loop yields every {@link CHUNK} of them.
 */
async function killMarked(runId: string, pending: ReadonlyMap<string, number>): Promise<void> {
  const wanted = new Set([...pending.keys()].map((id) => `${runId}/${id}`))
  const first = Math.min(...pending.values())
  const signalled = new Set<number>()
  // What a process forked while a scan read /proc is not in it: scan again while scans kill something.
  for (let pass = 0; pass < SCAN_PASSES; pass++) {
    if (!(await scanOnce(wanted, first, signalled))) break
  }
  await gone([...signalled])
}

/** One scan: SIGKILLs the marked processes not signalled yet; true when it found any. */
async function scanOnce(
  wanted: ReadonlySet<string>,
  first: number,
  signalled: Set<number>,
): Promise<boolean> {
  let entries: string[]
  let last: number
  try {
    entries = await readdir('/proc')
    last = Number((await readFile('/proc/sys/kernel/ns_last_pid', 'latin1').catch(() => '')).trim())
  } catch {
    return false
  }
  const wrapped = !Number.isInteger(last) || last < first
  const pids = entries
    .map(Number)
    .filter((pid) => Number.isInteger(pid) && pid !== process.pid && (wrapped || pid >= first))
  let found = false
  for (let at = 0; at < pids.length; at += CHUNK) {
    if (at > 0) await new Promise((resolve) => setImmediate(resolve))
    for (const pid of pids.slice(at, at + CHUNK)) {
      if (signalled.has(pid)) continue // killed by an earlier scan, not yet gone
      const marker = markerOf(pid)
      if (marker === undefined || !wanted.has(marker)) continue
      found = true
      signalled.add(pid)
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        // gone meanwhile
      }
    }
  }
  return found
}

const PREFIX = Buffer.from(`${MARKER_VARIABLE}=`, 'latin1')

/** The value of a process's marker variable (`<runId>/<procId>`), or undefined (none, gone, not ours to read). */
function markerOf(pid: number): string | undefined {
  let environ: Buffer
  try {
    environ = readFileSync(`/proc/${pid}/environ`)
  } catch {
    return undefined
  }
  let at = environ.indexOf(PREFIX)
  // Only at the start of a variable: `X=...TOOLVISOR_PROCESS=...` inside another value is not it.
  while (at > 0 && environ[at - 1] !== 0) at = environ.indexOf(PREFIX, at + 1)
  if (at < 0) return undefined
  const end = environ.indexOf(0, at)
  return environ.toString('latin1', at + PREFIX.length, end < 0 ? environ.length : end)
}

/** Waits (bounded) until each pid is dead: absent, or a zombie its parent has yet to reap. */
async function gone(pids: readonly number[]): Promise<void> {
  const deadline = Date.now() + GONE_MS
  let left = [...pids]
  while (left.length > 0 && Date.now() < deadline) {
    left = left.filter((pid) => {
      const stat = procStat(pid)
      return stat !== undefined && stat.state !== 'Z' && stat.state !== 'X'
    })
    if (left.length > 0) await new Promise((resolve) => setTimeout(resolve, 5))
  }
}
