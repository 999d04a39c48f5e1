import type { Hierarchy } from './host.js'

/**
 * The limit files of a launch's cgroups (decision 0097): which leaves it needs, and what is
 * written in them, in the kernel's units (cgroup v2 and the v1 controllers of a hybrid host).
 */

/** The cgroup limits of a launch, in the kernel's units. */
export interface CgroupLimits {
  readonly memory?: number
  readonly pids?: number
  /** Share of one CPU. */
  readonly cpu?: number
}

/** The same limits, as a tree made ahead has them. */
export function sameLimits(a: CgroupLimits, b: CgroupLimits): boolean {
  return a.memory === b.memory && a.pids === b.pids && a.cpu === b.cpu
}

/** A launch with `limits` needs a leaf in `hierarchy` (the member, an account, or a limit of its). */
export function needs(hierarchy: Hierarchy, limits: CgroupLimits): boolean {
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
export function liftWrites(hierarchy: Hierarchy): LimitWrite[] {
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
export type LimitWrite = readonly [file: string, value: string, optional?: boolean]

/** The limit files a leaf in `hierarchy` is given for `limits`. */
export function limitWrites(hierarchy: Hierarchy, limits: CgroupLimits): LimitWrite[] {
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
