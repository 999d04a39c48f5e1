import { closeSync } from 'node:fs'
import { rmdir } from 'node:fs/promises'
import { join } from 'node:path'
import {
  type CgroupHost,
  type Controller,
  enableIn,
  type Hierarchy,
  type KillMethod,
  makeDir,
  openHeld,
  read,
  readHeld,
  removeDir,
  writeTo,
} from './cgroup-host.js'
import { emptied, keyed, killTree, pidsIn } from './cgroup-kill.js'

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

/** The cgroups of one runtime instance: `<base>/<runId>` in every hierarchy, a leaf per launch. */
export class Containment {
  readonly host: Extract<CgroupHost, { available: true }>
  readonly runId: string
  /** The run's directory in each hierarchy, `member`'s first. */
  readonly runDirs: readonly string[]
  /** The tree made ahead for the next launch (see `reserve`). */
  #spare: { readonly id: string; readonly limits: CgroupLimits; readonly tree: Tree } | undefined
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
    if (spare !== undefined && spare.id === id && sameLimits(spare.limits, limits)) return spare.tree
    spare?.tree.remove()
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
  reserve(id: string, limits: CgroupLimits): void {
    if (this.#spare !== undefined || this.#closed) return
    try {
      const tree = new Tree(this.#make(id, limits), this.host.kill, this.#trees)
      this.#trees.add(tree)
      tree.prime()
      this.#spare = { id, limits, tree }
    } catch {
      // Made at the launch instead, which then says why it cannot be.
    }
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

/** The cgroups of one launch: what it joins, how it is killed whole, what it used. */
export class Tree {
  readonly #leaves: Map<Hierarchy, string>
  readonly #kill: KillMethod
  readonly #live: Set<Tree>
  /** The files its end reads, held open (see `prime`). */
  readonly #held = new Map<string, number>()
  #removed = false

  constructor(leaves: Map<Hierarchy, string>, kill: KillMethod, live: Set<Tree>) {
    this.#leaves = leaves
    this.#kill = kill
    this.#live = live
  }

  /** The v2 leaf, which the launch is born in (clone3 CLONE_INTO_CGROUP), when there is one. */
  get bornIn(): string | undefined {
    for (const [hierarchy, dir] of this.#leaves) if (hierarchy.version === 2) return dir
    return undefined
  }

  /** The `cgroup.procs` files the launch joins before its exec (the v1 hierarchies). */
  procsFiles(): string[] {
    return [...this.#leaves].filter(([h]) => h.version === 1).map(([, dir]) => join(dir, 'cgroup.procs'))
  }

  /** The member leaf (where `cgroup.procs` lists the whole tree). */
  get dir(): string {
    return this.#leaves.values().next().value!
  }

  #of(controller: Controller): { dir: string; version: 1 | 2 } | undefined {
    for (const [hierarchy, dir] of this.#leaves)
      if (hierarchy.controllers.has(controller) || (controller === 'cpuacct' && hierarchy.version === 2))
        return { dir, version: hierarchy.version }
    return undefined
  }

  /** The pids in the tree now. */
  members(): number[] {
    return pidsIn(this.dir)
  }

  /**
   * Kills every process of the tree, whatever it did to its group, session or environment; false
   * when there was none left to kill (most tools leave nothing once their leader is gone).
   */
  async kill(): Promise<boolean> {
    const events = this.#read(join(this.dir, 'cgroup.events'))
    if (events !== undefined ? keyed(events).get('populated') === 0 : this.members().length === 0)
      return false
    await killTree(this.dir, this.#kill, this.#of('freezer')?.dir)
    return true
  }

  /**
   * Opens the files its end reads (populated, the events at its limits, its peaks and cpu time),
   * off the launch path: the first open of a file in a new cgroup makes its inode, several times
   * what a read of an open one costs. Each is read again at its offset 0. None opened (out of
   * descriptors): read by path.
   */
  prime(): void {
    const files = [join(this.dir, 'cgroup.events')]
    const memory = this.#of('memory')
    const pids = this.#of('pids')
    const cpu = this.#of('cpuacct')
    if (memory) {
      const v2 = memory.version === 2
      files.push(join(memory.dir, v2 ? 'memory.peak' : 'memory.max_usage_in_bytes'))
      files.push(join(memory.dir, v2 ? 'memory.events' : 'memory.oom_control'))
    }
    if (pids) files.push(join(pids.dir, 'pids.peak'), join(pids.dir, 'pids.events'))
    if (cpu) files.push(join(cpu.dir, cpu.version === 2 ? 'cpu.stat' : 'cpuacct.usage'))
    for (const file of files) {
      const fd = openHeld(file)
      if (fd !== undefined) this.#held.set(file, fd)
    }
  }

  #read(path: string): string | undefined {
    const fd = this.#held.get(path)
    return fd === undefined ? read(path) : readHeld(fd)
  }

  #number(path: string): number | undefined {
    const text = this.#read(path)
    if (text === undefined) return undefined
    const value = Number(text.trim())
    return Number.isFinite(value) ? value : undefined
  }

  #release(): void {
    for (const fd of this.#held.values()) closeSync(fd)
    this.#held.clear()
  }

  /** Resolves once the tree has no process left (bounded: false when some remain). */
  async emptied(): Promise<boolean> {
    return emptied(this.dir)
  }

  /** What the tree uses; `final`: its peaks and cpu time only (what is current lags while the killed are reaped). */
  usage(final = false): TreeUsage {
    const memory = this.#of('memory')
    const pids = this.#of('pids')
    const cpu = this.#of('cpuacct')
    const out: { -readonly [K in keyof TreeUsage]: TreeUsage[K] } = {}
    if (memory !== undefined) {
      const v2 = memory.version === 2
      if (!final)
        assign(out, 'memory', this.#number(join(memory.dir, v2 ? 'memory.current' : 'memory.usage_in_bytes')))
      assign(
        out,
        'memoryPeak',
        this.#number(join(memory.dir, v2 ? 'memory.peak' : 'memory.max_usage_in_bytes')),
      )
    }
    if (pids !== undefined) {
      if (!final) assign(out, 'pids', this.#number(join(pids.dir, 'pids.current')))
      assign(out, 'pidsPeak', this.#number(join(pids.dir, 'pids.peak')))
    }
    if (cpu !== undefined) {
      const ms =
        cpu.version === 2
          ? keyed(this.#read(join(cpu.dir, 'cpu.stat'))).get('usage_usec')! / 1000
          : this.#number(join(cpu.dir, 'cpuacct.usage'))! / 1e6
      assign(out, 'cpuMs', Number.isFinite(ms) ? Math.round(ms) : undefined)
    }
    return out
  }

  /** What the kernel did at the tree's limits; `memory` false: its OOM kills are not read (0). */
  events(memory = true): TreeEvents {
    const memoryDir = memory ? this.#of('memory') : undefined
    const pids = this.#of('pids')
    const file = memoryDir?.version === 2 ? 'memory.events' : 'memory.oom_control'
    const oom =
      memoryDir === undefined ? undefined : keyed(this.#read(join(memoryDir.dir, file))).get('oom_kill')
    const max = pids === undefined ? undefined : keyed(this.#read(join(pids.dir, 'pids.events'))).get('max')
    return { oomKills: oom ?? 0, forksRefused: max ?? 0 }
  }

  /**
   * Removes the tree's cgroups on the thread pool (an rmdir costs more than the rest of a tree's
   * end); what is still busy is tried again after `retryMs`, then left for `close` and the next
   * start.
   */
  async removeLater(retryMs: number): Promise<void> {
    this.#release()
    for (let attempt = 0; attempt < 2 && !this.#removed; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, retryMs).unref())
      const results = await Promise.all(
        [...this.#leaves.values()].map((dir) =>
          rmdir(dir).then(
            () => true,
            (e: NodeJS.ErrnoException) => e.code === 'ENOENT',
          ),
        ),
      )
      if (results.every(Boolean)) {
        this.#removed = true
        this.#live.delete(this)
      }
    }
  }

  /** Removes the tree's cgroups (once empty); false when some could not be removed yet. */
  remove(): boolean {
    if (this.#removed) return true
    this.#release()
    let all = true
    for (const dir of this.#leaves.values()) all = removeDir(dir) && all
    this.#removed = all
    if (all) this.#live.delete(this)
    return all
  }
}

function assign<K extends keyof TreeUsage>(
  out: { -readonly [P in keyof TreeUsage]: TreeUsage[P] },
  key: K,
  value: number | undefined,
): void {
  if (value !== undefined && Number.isFinite(value)) out[key] = value as never
}
