import { existsSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { makeDir, read, removeDir, writeTo } from './internal/files.js'

export { makeDir, openHeld, read, readHeld, removeDir, writeTo } from './internal/files.js'

/**
 * Where this host lets toolvisor keep a cgroup per launch (decision 0097): found once per process
 * from `/proc/self/mountinfo` and `/proc/self/cgroup`, never assumed. The unified (v2) hierarchy
 * holds every tree when it is mounted and writable: membership, `cgroup.kill`, `cpu.stat`, and the
 * controllers delegated to it. A controller the v2 tree lacks is taken from its v1 hierarchy when
 * the host mounts one (a hybrid host); the rest cannot be enforced, and `check --probe` says so.
 */

/** The controllers a limit or an account needs. */
export type Controller = 'memory' | 'pids' | 'cpu' | 'cpuacct' | 'freezer'
const LIMIT_CONTROLLERS = ['memory', 'pids', 'cpu'] as const

/** One hierarchy toolvisor keeps trees in: its subtree (`base`) and what it offers there. */
export interface Hierarchy {
  readonly version: 1 | 2
  /** toolvisor's subtree: one directory per runtime instance below, one per launch below that. */
  readonly base: string
  /** The controllers it enforces and accounts with (v2: enabled in `base`'s subtree_control). */
  readonly controllers: ReadonlySet<Controller>
}

/** How a whole tree is killed. */
export type KillMethod = 'cgroup.kill' | 'freezer' | 'signals'

/** What the host offers (see {@link cgroupHost}). */
export type CgroupHost =
  | {
      readonly available: true
      /** The hierarchy whose `cgroup.procs` lists a tree (v2 when there is one). */
      readonly member: Hierarchy
      /** Every hierarchy a launch joins, `member` first. */
      readonly hierarchies: readonly Hierarchy[]
      readonly kill: KillMethod
      /** What could not be had, one line each (a controller not delegated, a v1 tree not writable). */
      readonly gaps: readonly string[]
    }
  | { readonly available: false; readonly reason: string }

interface Mount {
  readonly point: string
  readonly root: string
}

const cache = new Map<string, CgroupHost>()

/**
 * The cgroups this process can use. `root`: a v2 directory the operator delegated (toolvisor's
 * subtree is made there); absent: toolvisor's own v2 cgroup, with `toolvisor` below it; `false`:
 * turned off. Cached per option.
 */
export function cgroupHost(root: string | false | undefined): CgroupHost {
  const key = String(root)
  let host = cache.get(key)
  if (host === undefined) {
    host = root === false ? { available: false, reason: 'turned off (cgroup: false)' } : probe(root)
    cache.set(key, host)
  }
  return host
}

function probe(root: string | undefined): CgroupHost {
  let mountinfo: string
  let membership: string
  try {
    mountinfo = readFileSync('/proc/self/mountinfo', 'utf8')
    membership = readFileSync('/proc/self/cgroup', 'utf8')
  } catch (error) {
    return { available: false, reason: `cannot read /proc/self: ${(error as NodeJS.ErrnoException).code}` }
  }
  const { v2, v1 } = mountsOf(mountinfo)
  const own = ownCgroups(membership)
  const gaps: string[] = []
  const hierarchies: Hierarchy[] = []
  let unified: Hierarchy | undefined
  if (v2 !== undefined || root !== undefined) {
    const ownDir = v2 !== undefined && own.v2 !== undefined ? inside(v2, own.v2) : undefined
    const base = root ?? (ownDir === undefined ? undefined : join(ownDir, 'toolvisor'))
    if (base === undefined) gaps.push('cgroup v2: this process is in no v2 cgroup')
    else {
      const made = unifiedAt(base, root === undefined ? ownDir : undefined, gaps)
      unified = made
      if (made !== undefined) hierarchies.push(made)
    }
  } else gaps.push('cgroup v2: not mounted')
  const have = new Set<Controller>(unified?.controllers ?? [])
  const v1Wanted: Controller[] = [...LIMIT_CONTROLLERS]
  if (unified === undefined) v1Wanted.push('cpuacct', 'freezer')
  for (const controller of v1Wanted) {
    if (have.has(controller)) continue
    const mount = v1.get(controller)
    const path = own.v1.get(controller)
    if (mount === undefined || path === undefined) continue
    const base = join(inside(mount, path), 'toolvisor')
    const problem = usableAt(base)
    if (problem !== undefined) {
      gaps.push(`cgroup v1 ${controller}: ${base}: ${problem}`)
      continue
    }
    hierarchies.push({ version: 1, base, controllers: new Set([controller]) })
    have.add(controller)
  }
  for (const controller of LIMIT_CONTROLLERS)
    if (!have.has(controller)) gaps.push(`${controller}: no ${controller} controller toolvisor may use here`)
  const member = hierarchies[0]
  if (member === undefined) {
    return { available: false, reason: gaps.join('; ') || 'no cgroup hierarchy is mounted' }
  }
  const kill: KillMethod =
    unified?.version === 2 && killable(unified.base)
      ? 'cgroup.kill'
      : have.has('freezer')
        ? 'freezer'
        : 'signals'
  return { available: true, member, hierarchies, kill, gaps }
}

/** The v2 hierarchy at `base`, made, with every controller it can have enabled below it. */
function unifiedAt(base: string, ownDir: string | undefined, gaps: string[]): Hierarchy | undefined {
  const problem = usableAt(base)
  if (problem !== undefined) {
    gaps.push(`cgroup v2: ${base}: ${problem}`)
    return undefined
  }
  const parent = join(base, '..')
  const offered = words(read(join(parent, 'cgroup.controllers')))
  let available = words(read(join(base, 'cgroup.controllers')))
  const missing = LIMIT_CONTROLLERS.filter((name) => offered.has(name) && !available.has(name))
  if (missing.length > 0 && ownDir !== undefined && parent === ownDir) {
    // Our own cgroup offers them but holds processes (us), which the kernel forbids for a cgroup
    // that hands controllers down: when it holds this process alone, this process moves into a
    // leaf of its own first (what a systemd unit with Delegate=yes expects of its service).
    if (enableIn(parent, missing) !== undefined && onlyUs(parent)) {
      const leaf = join(parent, 'runtime')
      if (
        makeDir(leaf) === undefined &&
        writeTo(join(leaf, 'cgroup.procs'), String(process.pid)) === undefined
      )
        enableIn(parent, missing)
    }
    available = words(read(join(base, 'cgroup.controllers')))
  }
  for (const name of missing)
    if (!available.has(name)) gaps.push(`cgroup v2 ${name}: offered to ${parent} but not delegated below it`)
  const controllers = new Set<Controller>()
  const usable = LIMIT_CONTROLLERS.filter((name) => available.has(name))
  if (usable.length > 0 && enableIn(base, usable) === undefined)
    for (const name of usable) controllers.add(name)
  return { version: 2, base, controllers }
}

/** Writes `+NAME ...` to a cgroup's subtree_control; the error code when refused. */
export function enableIn(dir: string, names: readonly string[]): string | undefined {
  if (names.length === 0) return undefined
  return writeTo(join(dir, 'cgroup.subtree_control'), names.map((name) => `+${name}`).join(' '))
}

function onlyUs(dir: string): boolean {
  const pids = (read(join(dir, 'cgroup.procs')) ?? '').split('\n').filter((line) => line !== '')
  return pids.length === 1 && Number(pids[0]) === process.pid
}

/** True when a v2 cgroup below `base` has `cgroup.kill` (Linux 5.14). */
/**
 * Why toolvisor cannot keep cgroups in `base` (made if missing), or undefined: a cgroup is made
 * below it and removed again (`base` may exist already, another user's: EACCES then).
 */
function usableAt(base: string): string | undefined {
  const probe = join(base, `probe-${process.pid}-${Date.now()}`)
  const problem = makeDir(base) ?? makeDir(probe)
  removeDir(probe)
  return problem
}

function killable(base: string): boolean {
  const probe = join(base, `probe-${process.pid}`)
  if (makeDir(probe) !== undefined) return false
  try {
    return existsSync(join(probe, 'cgroup.kill'))
  } finally {
    removeDir(probe)
  }
}

/** Where a hierarchy shows the cgroup `path` (its mount may show a subtree only). */
function inside(mount: Mount, path: string): string {
  const rest = relative(mount.root, path)
  return rest.startsWith('..') ? mount.point : join(mount.point, rest)
}

function mountsOf(mountinfo: string): { v2?: Mount; v1: Map<string, Mount> } {
  const v1 = new Map<string, Mount>()
  let v2: Mount | undefined
  for (const line of mountinfo.split('\n')) {
    const [left, right] = line.split(' - ')
    if (left === undefined || right === undefined) continue
    const fields = left.split(' ')
    const [type, , options] = right.split(' ')
    const mount = { root: unoctal(fields[3] ?? '/'), point: unoctal(fields[4] ?? '') }
    if (type === 'cgroup2') v2 ??= mount
    else if (type === 'cgroup')
      for (const option of (options ?? '').split(',')) if (!v1.has(option)) v1.set(option, mount)
  }
  return v2 === undefined ? { v1 } : { v2, v1 }
}

/** mountinfo escapes space, tab, newline and backslash as octal. */
function unoctal(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)))
}

function ownCgroups(text: string): { v2?: string; v1: Map<string, string> } {
  const v1 = new Map<string, string>()
  let v2: string | undefined
  for (const line of text.split('\n')) {
    const match = /^(\d+):([^:]*):(.*)$/.exec(line)
    if (match === null) continue
    const [, id, names, path] = match as unknown as [string, string, string, string]
    if (id === '0' && names === '') v2 = path
    else for (const name of names.split(',')) v1.set(name, path)
  }
  return v2 === undefined ? { v1 } : { v2, v1 }
}

function words(text: string | undefined): Set<string> {
  return new Set((text ?? '').split(/\s+/).filter((word) => word !== ''))
}
