import { join } from 'node:path'
import {
  type CgroupHost,
  type Controller,
  enableIn,
  type Hierarchy,
  type KillMethod,
  makeDir,
  read,
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
    const leaves = new Map<Hierarchy, string>()
    try {
      for (const [index, hierarchy] of this.host.hierarchies.entries()) {
        const needed = index === 0 || needs(hierarchy, limits)
        if (!needed) continue
        const dir = join(this.runDirs[index]!, id)
        const problem = makeDir(dir)
        if (problem !== undefined) throw new Error(`cannot make the cgroup ${dir}: ${problem}`)
        leaves.set(hierarchy, dir)
        applyLimits(hierarchy, dir, limits)
      }
    } catch (error) {
      for (const dir of leaves.values()) removeDir(dir)
      throw error
    }
    return new Tree(leaves, this.host.kill)
  }

  /** Removes the run's directories (every tree removed first). */
  close(): void {
    for (const dir of this.runDirs) removeDir(dir)
  }
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

function applyLimits(hierarchy: Hierarchy, dir: string, limits: CgroupLimits): void {
  const c = hierarchy.controllers
  const set = (file: string, value: number | string, optional = false) => {
    const problem = writeTo(join(dir, file), String(value))
    if (problem !== undefined && !optional)
      throw new Error(`cannot set ${join(dir, file)} to ${value}: ${problem}`)
  }
  if (limits.memory !== undefined && c.has('memory')) {
    if (hierarchy.version === 2) {
      set('memory.max', limits.memory)
      set('memory.swap.max', 0, true) // absent without swap accounting: memory.max bounds it all then
    } else {
      set('memory.limit_in_bytes', limits.memory)
      set('memory.memsw.limit_in_bytes', limits.memory, true)
    }
  }
  if (limits.pids !== undefined && c.has('pids')) set('pids.max', limits.pids)
  if (limits.cpu !== undefined && c.has('cpu')) {
    const quota = Math.max(1000, Math.round(limits.cpu * CPU_PERIOD_US))
    if (hierarchy.version === 2) set('cpu.max', `${quota} ${CPU_PERIOD_US}`)
    else {
      set('cpu.cfs_period_us', CPU_PERIOD_US)
      set('cpu.cfs_quota_us', quota)
    }
  }
}

/** The cgroups of one launch: what it joins, how it is killed whole, what it used. */
export class Tree {
  readonly #leaves: Map<Hierarchy, string>
  readonly #kill: KillMethod
  #removed = false

  constructor(leaves: Map<Hierarchy, string>, kill: KillMethod) {
    this.#leaves = leaves
    this.#kill = kill
  }

  /** The `cgroup.procs` files the launch joins before its exec. */
  procsFiles(): string[] {
    return [...this.#leaves.values()].map((dir) => join(dir, 'cgroup.procs'))
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

  /** Kills every process of the tree, whatever it did to its group, session or environment. */
  async kill(): Promise<void> {
    await killTree(this.dir, this.#kill, this.#of('freezer')?.dir)
  }

  /** Resolves once the tree has no process left (bounded: false when some remain). */
  async emptied(): Promise<boolean> {
    return emptied(this.dir)
  }

  usage(): TreeUsage {
    const memory = this.#of('memory')
    const pids = this.#of('pids')
    const cpu = this.#of('cpuacct')
    const out: { -readonly [K in keyof TreeUsage]: TreeUsage[K] } = {}
    if (memory !== undefined) {
      const v2 = memory.version === 2
      assign(out, 'memory', number(join(memory.dir, v2 ? 'memory.current' : 'memory.usage_in_bytes')))
      assign(out, 'memoryPeak', number(join(memory.dir, v2 ? 'memory.peak' : 'memory.max_usage_in_bytes')))
    }
    if (pids !== undefined) {
      assign(out, 'pids', number(join(pids.dir, 'pids.current')))
      assign(out, 'pidsPeak', number(join(pids.dir, 'pids.peak')))
    }
    if (cpu !== undefined) {
      const ms =
        cpu.version === 2
          ? keyed(read(join(cpu.dir, 'cpu.stat'))).get('usage_usec')! / 1000
          : number(join(cpu.dir, 'cpuacct.usage'))! / 1e6
      assign(out, 'cpuMs', Number.isFinite(ms) ? Math.round(ms) : undefined)
    }
    return out
  }

  events(): TreeEvents {
    const memory = this.#of('memory')
    const pids = this.#of('pids')
    const oom =
      memory === undefined
        ? undefined
        : keyed(read(join(memory.dir, memory.version === 2 ? 'memory.events' : 'memory.oom_control'))).get(
            'oom_kill',
          )
    const max = pids === undefined ? undefined : keyed(read(join(pids.dir, 'pids.events'))).get('max')
    return { oomKills: oom ?? 0, forksRefused: max ?? 0 }
  }

  /** Removes the tree's cgroups (once empty); false when some could not be removed yet. */
  remove(): boolean {
    if (this.#removed) return true
    let all = true
    for (const dir of this.#leaves.values()) all = removeDir(dir) && all
    this.#removed = all
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

function number(path: string): number | undefined {
  const text = read(path)
  if (text === undefined) return undefined
  const value = Number(text.trim())
  return Number.isFinite(value) ? value : undefined
}
