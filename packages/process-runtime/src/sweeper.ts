import { readdir, readFile } from 'node:fs/promises'
import { procStat } from './procfs.js'
import { MARKER_VARIABLE } from './state.js'

/** How long finished processes are collected before one scan of /proc covers them all. */
const BATCH_MS = 20
/** How long a scan waits for what it killed to be dead. */
const GONE_MS = 1000

/**
 * Kills what a process started that left its process group (`setsid cmd &`, a daemonizing tool):
 * the group kill cannot reach it, the run's marker (`TOOLVISOR_PROCESS=<runId>/<procId>`, in the
 * environment of everything the tool starts) finds it. Scans run off the launch path, asynchronously,
 * batched: one scan of /proc for every process that ended within a few milliseconds of another.
 */
export class Sweeper {
  readonly #runId: string
  /** Ids waiting for the next scan, with the pid each was spawned as. */
  #pending = new Map<string, number>()
  #scan: Promise<void> | undefined
  #running: Promise<void> = Promise.resolve()

  constructor(runId: string) {
    this.#runId = runId
  }

  /**
   * Kills what process `id` (spawned as `pid`) left outside its group; resolves when the scan that
   * covered it is done. A process that never got a pid started nothing.
   */
  sweep(id: string, pid: number | undefined): Promise<void> {
    if (pid === undefined) return this.#scan ?? this.#running
    this.#pending.set(id, Math.min(pid, this.#pending.get(id) ?? pid))
    this.#scan ??= new Promise<void>((resolve) => setTimeout(resolve, BATCH_MS)).then(() => {
      const pending = this.#pending
      this.#pending = new Map()
      this.#scan = undefined
      this.#running = this.#running.then(() => killMarked(this.#runId, pending))
      return this.#running
    })
    return this.#scan
  }

  /** Resolves once every scan asked for has run. */
  async idle(): Promise<void> {
    while (this.#scan !== undefined) await this.#scan
    await this.#running
  }
}

/**
 * SIGKILLs every live process whose marker is `<runId>/<id>` for an id of `pending`. What a process
 * started got a pid after its own, so only pids from the smallest spawned pid up to the last one
 * the kernel handed out are read (all of them when pids wrapped around meanwhile).
 */
async function killMarked(runId: string, pending: ReadonlyMap<string, number>): Promise<void> {
  const wanted = new Set([...pending.keys()].map((id) => `${MARKER_VARIABLE}=${runId}/${id}`))
  const first = Math.min(...pending.values())
  let entries: string[]
  let last: number
  try {
    entries = await readdir('/proc')
    last = Number((await readFile('/proc/sys/kernel/ns_last_pid', 'latin1').catch(() => '')).trim())
  } catch {
    return
  }
  const wrapped = !Number.isInteger(last) || last < first
  const killed: number[] = []
  await Promise.all(
    entries.map(async (entry) => {
      const pid = Number(entry)
      if (!Number.isInteger(pid) || pid === process.pid) return
      if (!wrapped && pid < first) return
      let environ: string
      try {
        environ = await readFile(`/proc/${pid}/environ`, 'latin1')
      } catch {
        return // gone, or not ours to read
      }
      if (!environ.split('\0').some((variable) => wanted.has(variable))) return
      try {
        process.kill(pid, 'SIGKILL')
        killed.push(pid)
      } catch {
        // gone meanwhile
      }
    }),
  )
  await gone(killed)
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
