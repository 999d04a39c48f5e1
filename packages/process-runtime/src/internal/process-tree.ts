import type { Tree, TreeUsage } from '@toolvisor/containment'
import type { SweepUrgency } from '@toolvisor/run-state'
import type { EndReason, LimitHit, ProcessExit } from '../types.js'
import { type AppliedLimits, bytes, show } from './limits.js'

/** How long pipes may stay open after the exit before the sweep of what holds them is hurried. */
const HELD_MS = 20

/** How long after a kill the removal of a tree's cgroups is tried again, when they were still busy. */
const RETRY_MS = 500

/**
 * A process's cgroup tree over its life (decision 0097): what the kernel did at its limits when
 * the tool ended, and its end: every process of the tree killed, its use read, its cgroups removed.
 */
export class ProcessTree {
  readonly #tree: Tree
  readonly #limits: AppliedLimits
  #ended: Promise<TreeUsage> | undefined
  #final: TreeUsage | undefined
  /** The limit the tool hit, once {@link hit} read it. */
  limit: LimitHit | undefined

  constructor(tree: Tree, limits: AppliedLimits) {
    this.#tree = tree
    this.#limits = limits
  }

  /** What the tree uses now (its final account once it ended). */
  usage(): TreeUsage {
    return this.#final ?? this.#tree.usage()
  }

  /**
   * Which limit ended the tool, read as its leader exits (before the rest of the tree is killed):
   * the kernel's OOM kills in the tree with the leader killed, SIGXCPU or SIGXFSZ (or a wrapper's
   * exit code for them, 128 + N), or forks refused at `pids`.
   */
  hit(code: number | null, signal: NodeJS.Signals | null): LimitHit | undefined {
    this.limit = this.#hit(code, signal)
    return this.limit
  }

  #hit(code: number | null, signal: NodeJS.Signals | null): LimitHit | undefined {
    const values = this.#limits.values
    // A clean exit (0, no signal) was no OOM kill of the leader: one read fewer at every end.
    const events = this.#tree.events(code !== 0 || signal !== null)
    const killed = signal === 'SIGKILL' || code === 137
    if (events.oomKills > 0 && values.memory !== undefined && killed)
      return ending('memory', values.memory, 'out of memory (limit %)', 'memory limit')
    const cpuTime = values.cpuTime
    if (cpuTime !== undefined && (signal === 'SIGXCPU' || code === 128 + 24 || (killed && this.#cpuSpent())))
      return ending('cpuTime', cpuTime, 'cpu time limit reached (%)', 'cpu time limit')
    if (values.fileSize !== undefined && (signal === 'SIGXFSZ' || code === 128 + 25))
      return ending('fileSize', values.fileSize, 'file size limit reached (%)', 'file size limit')
    if (events.forksRefused > 0 && values.pids !== undefined) {
      const why = `hit the process limit (${values.pids} processes): ${plural(events.forksRefused, 'fork')} refused`
      return { field: 'pids', value: values.pids, ended: false, why, marker: why }
    }
    if (events.oomKills > 0 && values.memory !== undefined) {
      const why = `${plural(events.oomKills, 'process', 'processes')} killed at the memory limit (${bytes(values.memory)})`
      return { field: 'memory', value: values.memory, ended: false, why, marker: why }
    }
    return undefined
  }

  #cpuSpent(): boolean {
    // The hard limit (a second past the soft one) ends a tool that caught SIGXCPU with SIGKILL.
    const cpu = this.#tree.usage().cpuMs
    return cpu !== undefined && cpu >= (this.#limits.values.cpuTime ?? Number.POSITIVE_INFINITY) * 1000
  }

  /** Kills whatever is left of the tree and removes its cgroups; resolves with its final use. */
  end(): Promise<TreeUsage> {
    this.#ended ??= (async () => {
      if (await this.#tree.kill()) await this.#tree.emptied()
      this.#final = this.#tree.usage(true)
      // Removed after the exit is told (an rmdir costs more than the rest of the end); still busy
      // (a process stuck in the kernel): tried again, then left for the next start.
      void this.#tree.removeLater(RETRY_MS)
      return this.#final
    })()
    return this.#ended
  }
}

/** A limit that ended the tool: `why` with its value for `%`, and its marker (`killed: memory limit 64 MiB`). */
function ending(field: LimitHit['field'], value: number, why: string, marker: string): LimitHit {
  const limit = field === 'cpuTime' ? show(field, value) : bytes(value)
  return { field, value, ended: true, why: why.replace('%', limit), marker: `killed: ${marker} ${limit}` }
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`
}

/**
 * After a tool's leader exited: what it started dies too (its cgroup tree killed whole; without
 * one, the marker sweep, lazy, hurried when the pipes stay open: something that left the group
 * holds them). Resolves once the pipes drained and the tree is gone.
 */
export async function cleanUp(
  tree: ProcessTree | undefined,
  sweep: (urgency: SweepUrgency) => Promise<void>,
  pipes: readonly Promise<unknown>[],
): Promise<void> {
  if (tree !== undefined) {
    await Promise.all([...pipes, tree.end()])
    return
  }
  void sweep('lazy')
  const held = setTimeout(() => void sweep('soon'), HELD_MS)
  await Promise.all(pipes)
  clearTimeout(held)
}

/**
 * A process's `ProcessExit`: `failure` makes it failed (its why), and so does a limit that ended
 * it (reason `limit`) unless it was already ending for a reason of its own (a stop, a timer); else
 * `why` says why toolvisor killed it, or the limit it hit (forks refused).
 */
export function exitOf(
  code: number | null,
  signal: NodeJS.Signals | null,
  end: {
    readonly reason: EndReason | undefined
    readonly failure: string | undefined
    readonly why: string | undefined
    readonly limit: LimitHit | undefined
    readonly usage: TreeUsage | undefined
  },
): ProcessExit {
  const { limit } = end
  const byLimit = limit?.ended === true && end.reason === undefined && end.failure === undefined
  const failure = byLimit ? limit.why : end.failure
  const why = failure ?? end.why ?? limit?.why
  return {
    status: failure !== undefined ? 'failed' : 'exited',
    code,
    signal,
    reason: byLimit ? 'limit' : (end.reason ?? (failure ? 'spawn-failed' : 'exit')),
    at: new Date(),
    ...(why !== undefined ? { why } : {}),
    ...(end.limit ? { limit: end.limit } : {}),
    ...(end.usage ? { usage: end.usage } : {}),
  }
}
