import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { type CgroupHost, enableIn, type Hierarchy, makeDir, removeDir, writeTo } from './host.js'
import { alive } from './internal/kill.js'
import { type CgroupLimits, type LimitWrite, liftWrites, limitWrites, needs, sameLimits } from './limits.js'
import type { CgroupPlacement, WarmAnswer } from './placement.js'
import { type Remover, Tree } from './tree.js'

export type { CgroupLimits }
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
  /**
   * Through its network gate, when it has an allow list (issue 32; not a cgroup's figure):
   * connections made, bytes from the network and to it, connections refused.
   */
  readonly network?: {
    readonly connections: number
    readonly bytesIn: number
    readonly bytesOut: number
    readonly denied: number
    /** Per `host:port` reached (at most 20, the most bytes first). */
    readonly names?: Readonly<
      Record<string, { readonly connections: number; readonly bytesIn: number; readonly bytesOut: number }>
    >
  }
}

/** What the kernel did to a tree at its limits. */
export interface TreeEvents {
  /** Processes the kernel killed at the memory limit (memory.events / memory.oom_control oom_kill). */
  readonly oomKills: number
  /** Forks refused at the process limit (pids.events max). */
  readonly forksRefused: number
}

/** A tree made ahead for launch `id`, with the limits written in it, once `made` says so. */
interface Spare {
  readonly id: string
  readonly limits: CgroupLimits
  readonly tree: Tree
  readonly made: Promise<WarmAnswer>
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
  readonly #server: () => CgroupPlacement | undefined
  /** The launch that comes next and the limits most launches have: what a tree made ahead is for. */
  readonly #next: () => readonly [id: string, limits: CgroupLimits]
  /** Trees ended on this turn of the loop, removed together by one request to the server. */
  #ending: { dirs: readonly string[]; done: (failed: number | undefined) => void }[] = []

  constructor(
    host: Extract<CgroupHost, { available: true }>,
    runId: string,
    server: () => CgroupPlacement | undefined,
    next: () => readonly [id: string, limits: CgroupLimits],
  ) {
    this.host = host
    this.runId = runId
    this.#server = server
    this.#next = next
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
  async tree(id: string, limits: CgroupLimits): Promise<Tree> {
    const spare = this.#spare
    this.#spare = undefined
    setImmediate(() => this.ahead())
    if (spare !== undefined && spare.id === id) {
      // Made by the server (asked when the launch before this one started); not made, or the
      // server gone: made here, which says why it cannot be.
      if ((await spare.made).made) {
        if (sameLimits(spare.limits, limits) || this.#retarget(spare, limits)) return spare.tree
        // Its directories have this launch's name: gone before the launch's own are made.
        if (!spare.tree.removeNow())
          throw new Error(`the cgroup ${spare.tree.dir} made ahead for it cannot be removed`)
      } else this.#trees.delete(spare.tree)
    } else if (spare !== undefined) void discard(spare.tree)
    const tree = this.#tree(this.#make(id, limits))
    tree.prime()
    return tree
  }

  /** Has the server make the tree of the launch that comes next, unless one is made or on its way. */
  ahead(): void {
    if (this.#spare === undefined) this.reserve(...this.#next())
  }

  /**
   * Has the server make the tree of launch `id` (with `limits`) and fork a child there that the
   * launch then becomes: its mkdirs, limit writes and migrations cost more than the rest of a
   * launch's containment together, and there they cost this event loop nothing.
   */
  reserve(id: string, limits: CgroupLimits): Tree | undefined {
    const server = this.#server()
    if (this.#spare !== undefined || this.#closed || server === undefined) return undefined
    const plan = this.#plan(id, limits)
    const tree = this.#tree(new Map(plan.map(({ hierarchy, dir }) => [hierarchy, dir])))
    const made = server.warm({
      bornIn: tree.bornIn,
      procsFiles: tree.procsFiles(),
      make: plan.map(({ dir }) => dir),
      writes: plan.flatMap(({ dir, writes }) =>
        writes.map(([file, value, optional]) => [join(dir, file), value, optional === true] as const),
      ),
    })
    // Its end's files opened once it is there, while the launch before it runs (see `Tree.prime`).
    tree.warmed = made.then((answer) => {
      if (answer.made) tree.prime()
      return answer.pid
    })
    this.#spare = { id, limits, tree, made }
    return tree
  }

  /**
   * The tree a kept process of another run still holds (decision 0113): its leaf `leaf` below run
   * `run` in each hierarchy where it is there, killed and removed like this run's own at its end;
   * undefined when none is there.
   */
  existing(run: string, leaf: string): Tree | undefined {
    if (!/^[\w.-]+$/.test(run) || !/^[\w.-]+$/.test(leaf)) return undefined
    const leaves = new Map<Hierarchy, string>()
    for (const hierarchy of this.host.hierarchies) {
      const dir = join(hierarchy.base, run, leaf)
      if (existsSync(dir)) leaves.set(hierarchy, dir)
    }
    return leaves.size === 0 ? undefined : this.#tree(leaves)
  }

  #tree(leaves: Map<Hierarchy, string>): Tree {
    const tree = new Tree(leaves, this.host.kill, this.#trees, this.#remover)
    this.#trees.add(tree)
    return tree
  }

  /**
   * Removes an ended tree's cgroups through the server, with every other tree that ended on this
   * turn of the loop (one request, sent after the exits were told): how many of its own are still
   * there; undefined when there is no server to ask.
   */
  readonly #remover: Remover = (dirs) =>
    new Promise((done) => {
      if (this.#ending.push({ dirs, done }) === 1) setImmediate(() => this.#flush())
    })

  async #flush(): Promise<void> {
    const batch = this.#ending
    this.#ending = []
    const failed = await this.#server()?.remove(batch.flatMap(({ dirs }) => dirs))
    for (const { dirs, done } of batch)
      done(failed === 0 ? 0 : failed === undefined ? undefined : still(dirs))
  }

  /**
   * Gives up the tree made ahead, killing what waits in it (the fork server's warm child): before
   * `close`, which removes only what is empty.
   */
  async release(): Promise<void> {
    this.#closed = true
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

/** How many of `dirs` are still there. */
function still(dirs: readonly string[]): number {
  return dirs.filter((dir) => existsSync(dir)).length
}
