import { join } from 'node:path'
import { type CgroupHost, enableIn, type Hierarchy, makeDir, removeDir, writeTo } from './cgroup-host.js'
import { alive } from './cgroup-kill.js'
import { Tree } from './cgroup-tree.js'

export { Tree }

/** What a tree used, from its cgroups (absent: no controller here accounts for it). */
export interface TreeUsage {
  /** Bytes now, and at most (memory.current / memory.peak; v1 usage / max_usage). */
  readonly memory?: number
  readonly memoryPeak?: number
  /** Processes now, and at most (pids.current / pids.peak). */
  readonly pids?: number
  readonly pidsPeak?: number
  /** CPU time of every process of the tree, in milliseconds (cpu.stat usage_usec; v1 cpuacct.usage). */
  readonly cpuMs?: number
  /** Bytes of its output written to its spill files (stdout and stderr; not a cgroup's figure). */
  readonly spillBytes?: number
}

/** What the kernel did to a tree at its limits. */
export interface TreeEvents {
  /** Processes the kernel killed at the memory limit (memory.events / memory.oom_control oom_kill). */
  readonly oomKills: number
  /** Forks refused at the process limit (pids.events max). */
  readonly forksRefused: number
}

/** The cgroup limits of a launch, in the kernel's units. */
export interface CgroupLimits {
  readonly memory?: number
  readonly pids?: number
  /** Share of one CPU. */
  readonly cpu?: number
}

/** A tree made ahead for launch `id`, with the limits written in it. */
interface Spare {
  readonly id: string
  readonly limits: CgroupLimits
  readonly tree: Tree
}

/** The cgroups of one runtime instance: `<base>/<runId>` in every hierarchy, a leaf per launch. */
export class Containment {
  readonly host: Extract<CgroupHost, { available: true }>
  readonly runId: string
  /** The run's directory in each hierarchy, `member`'s first. */
  readonly runDirs: readonly string[]
  /** The tree made ahead for the next launch (see `reserve`). */
  #spare: Spare | undefined
  #closed = false
  /** Trees not removed yet: `close` removes what is left of them. */
  readonly #trees = new Set<Tree>()

  constructor(host: Extract<CgroupHost, { available: true }>, runId: string) {
    this.host = host
    this.runId = runId
    const dirs: string[] = []
    for (const hierarchy of host.hierarchies) {
      const dir = join(hierarchy.base, runId)
      const problem = makeDir(dir)
      if (problem !== undefined) throw new Error(`cannot make the cgroup ${dir}: ${problem}`)
      if (hierarchy.version === 2) enableIn(dir, [...hierarchy.controllers])
      dirs.push(dir)
    }
    this.runDirs = dirs
  }

  /**
   * A tree for launch `id`: a leaf in the member hierarchy and in each hierarchy whose controller
   * it needs (memory and pids always, for their accounts; cpu when it has a cpu limit), with its
   * limits written before anything joins it.
   */
  tree(id: string, limits: CgroupLimits): Tree {
    const spare = this.#spare
    this.#spare = undefined
    if (spare !== undefined && spare.id === id) {
      if (sameLimits(spare.limits, limits) || this.#retarget(spare, limits)) return spare.tree
      // Its directories have this launch's name: gone before the launch's own are made.
      if (!spare.tree.removeNow())
        throw new Error(`the cgroup ${spare.tree.dir} made ahead for it cannot be removed`)
    } else if (spare !== undefined) void discard(spare.tree)
    const tree = new Tree(this.#make(id, limits), this.host.kill, this.#trees)
    this.#trees.add(tree)
    tree.prime()
    return tree
  }

  /**
   * Makes the tree of the launch that comes next (`id`, with the limits most launches have) now,
   * while the launch before it waits for its exec: that launch then only joins it (its mkdirs,
   * limit writes and first opens cost more than the rest of a launch's containment together).
   * Synchronous on purpose: on the thread pool the mkdirs contend with the launch's own clone for
   * the kernel's cgroup lock (measured slower).
   */
  reserve(id: string, limits: CgroupLimits): Tree | undefined {
    if (this.#spare !== undefined || this.#closed) return undefined
    try {
      const tree = new Tree(this.#make(id, limits), this.host.kill, this.#trees)
      this.#trees.add(tree)
      tree.prime()
      this.#spare = { id, limits, tree }
      return tree
    } catch {
      // Made at the launch instead, which then says why it cannot be.
      return undefined
    }
  }

  /**
   * Gives up the tree made ahead, killing what waits in it (the fork server's warm child): before
   * `close`, which removes only what is empty.
   */
  async release(): Promise<void> {
    const spare = this.#spare
    this.#spare = undefined
    if (spare !== undefined) await discard(spare.tree)
  }

  /**
   * Rewrites the limits of the tree made ahead for a launch that has other limits, when it has
   * the leaves those need (a v1 cpu limit needs a leaf the tree made ahead has not): the child
   * waiting there runs nothing of the tool until the launch comes, after this. Each limit is
   * lifted first (a v1 memsw limit is never below the memory limit), then set. False: it did not
   * fit, or a write was refused.
   */
  #retarget(spare: Spare, limits: CgroupLimits): boolean {
    const plan = this.#plan(spare.id, limits)
    const leaves = new Set(plan.map(({ dir }) => dir))
    if (leaves.size !== spare.tree.leafCount || !plan.every(({ dir }) => spare.tree.has(dir))) return false
    for (const { hierarchy, dir, writes } of plan) {
      for (const [file, value, optional] of [...liftWrites(hierarchy), ...writes]) {
        const refused = writeTo(join(dir, file), value)
        if (refused !== undefined && !optional) return false
      }
    }
    return true
  }

  /** Each leaf a launch needs, and the limit files written in it. */
  #plan(id: string, limits: CgroupLimits): { hierarchy: Hierarchy; dir: string; writes: LimitWrite[] }[] {
    return this.host.hierarchies.flatMap((hierarchy, index) =>
      index === 0 || needs(hierarchy, limits)
        ? [{ hierarchy, dir: join(this.runDirs[index]!, id), writes: limitWrites(hierarchy, limits) }]
        : [],
    )
  }

  #make(id: string, limits: CgroupLimits): Map<Hierarchy, string> {
    const leaves = new Map<Hierarchy, string>()
    try {
      for (const { hierarchy, dir, writes } of this.#plan(id, limits)) {
        const problem = makeDir(dir)
        if (problem !== undefined) throw new Error(`cannot make the cgroup ${dir}: ${problem}`)
        leaves.set(hierarchy, dir)
        for (const [file, value, optional] of writes) {
          const refused = writeTo(join(dir, file), value)
          if (refused !== undefined && !optional)
            throw new Error(`cannot set ${join(dir, file)} to ${value}: ${refused}`)
        }
      }
    } catch (error) {
      for (const dir of leaves.values()) removeDir(dir)
      throw error
    }
    return leaves
  }

  /** Removes the run's directories (every tree removed first). */
  close(): void {
    this.#closed = true
    for (const tree of this.#trees) tree.remove()
    this.#spare = undefined
    for (const dir of this.runDirs) removeDir(dir)
  }
}

/** Kills a tree no launch will join (a warm child may wait in it), then removes it. */
async function discard(tree: Tree): Promise<void> {
  try {
    // Its warm child made first (or none): a kill before the server made it would find nothing,
    // nor one before it is in (born there, or joining it just after its fork).
    const warm = await tree.warmed
    for (let i = 0; warm !== undefined && i < 40 && !tree.members().includes(warm) && alive(warm); i++)
      await new Promise((resolve) => setTimeout(resolve, 5))
    if (await tree.kill()) await tree.emptied()
    await tree.removeLater(50)
  } catch {
    // Left to `close` and the next start, which remove what is left.
  }
}

function sameLimits(a: CgroupLimits, b: CgroupLimits): boolean {
  return a.memory === b.memory && a.pids === b.pids && a.cpu === b.cpu
}

function needs(hierarchy: Hierarchy, limits: CgroupLimits): boolean {
  const c = hierarchy.controllers
  return (
    hierarchy.version === 2 ||
    c.has('memory') ||
    c.has('pids') ||
    c.has('cpuacct') ||
    (c.has('cpu') && limits.cpu !== undefined) ||
    c.has('freezer')
  )
}

const CPU_PERIOD_US = 100_000

/** Every limit of a leaf lifted (what a tree made ahead had is then set anew). */
function liftWrites(hierarchy: Hierarchy): LimitWrite[] {
  const c = hierarchy.controllers
  const v2 = hierarchy.version === 2
  const out: LimitWrite[] = []
  if (c.has('memory'))
    if (v2) out.push(['memory.max', 'max'])
    else out.push(['memory.memsw.limit_in_bytes', '-1', true], ['memory.limit_in_bytes', '-1'])
  if (c.has('pids')) out.push(['pids.max', 'max'])
  if (c.has('cpu')) out.push(v2 ? ['cpu.max', `max ${CPU_PERIOD_US}`] : ['cpu.cfs_quota_us', '-1'])
  return out
}

/** A limit file and its value; `optional`: absent where the host does not account for it. */
type LimitWrite = readonly [file: string, value: string, optional?: boolean]

function limitWrites(hierarchy: Hierarchy, limits: CgroupLimits): LimitWrite[] {
  const c = hierarchy.controllers
  const v2 = hierarchy.version === 2
  const out: LimitWrite[] = []
  if (limits.memory !== undefined && c.has('memory')) {
    const bytes = String(limits.memory)
    // memsw / swap.max: absent without swap accounting; the memory limit bounds it all then.
    if (v2) out.push(['memory.max', bytes], ['memory.swap.max', '0', true])
    else out.push(['memory.limit_in_bytes', bytes], ['memory.memsw.limit_in_bytes', bytes, true])
  }
  if (limits.pids !== undefined && c.has('pids')) out.push(['pids.max', String(limits.pids)])
  if (limits.cpu !== undefined && c.has('cpu')) {
    const quota = String(Math.max(1000, Math.round(limits.cpu * CPU_PERIOD_US)))
    if (v2) out.push(['cpu.max', `${quota} ${CPU_PERIOD_US}`])
    else out.push(['cpu.cfs_period_us', String(CPU_PERIOD_US)], ['cpu.cfs_quota_us', quota])
  }
  return out
}
