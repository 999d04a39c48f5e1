import { readFileSync } from 'node:fs'
import { totalmem } from 'node:os'
import type { CgroupHost, CgroupLimits, Controller } from '@toolvisor/containment'
import { type LimitsSpec, limitKey } from '@toolvisor/describe-v2'
import type { Rlimit } from '@toolvisor/launchers'
import type { Fail } from './policy.js'

/** The operator's limits (toolvisor.json `limits`): what a tool gets unless it asks for less, and the most it may ask for. */
export interface LimitsPolicy {
  /** What every launch gets where its tool declares nothing (default {@link HOUSE_LIMITS}). */
  readonly defaults?: LimitsSpec
  /** The most a tool may declare (default: the defaults: a tool may ask for less, never more). */
  readonly ceilings?: LimitsSpec
}

const MiB = 1024 * 1024

/**
 * The house defaults (decision 0097): enough for any ordinary tool, and a bound on the two ways
 * one command takes a host down. `pids` 1024 holds a fork bomb (`:(){ :|:& };:` reaches it in
 * milliseconds and then only gets EAGAIN) while leaving room for a parallel build; `memory`, half
 * the host's RAM, holds a memory bomb while any real tool fits. CPU is not bounded by default (a
 * spin slows a host, it does not take it down; a build wants every core).
 */
export const HOUSE_LIMITS: LimitsSpec = Object.freeze({
  pids: 1024,
  memory: Math.max(256 * MiB, Math.floor(totalmem() / 2 / MiB) * MiB),
})

/** The kernel's `RLIMIT_*` numbers (the generic ones: x86, arm, riscv; not alpha, mips, sparc). */
const RLIMIT = { cpu: 0, fsize: 1, core: 4, nofile: 7 } as const

/** What the limits of one launch are and what enforces each. */
export interface AppliedLimits {
  /** The limits in force. */
  readonly values: LimitsSpec
  readonly cgroup: CgroupLimits
  readonly rlimits: readonly Rlimit[]
  /** What enforces each limit in force (`cgroup v2 memory.max`, `RLIMIT_FSIZE`). */
  readonly enforcedBy: Readonly<Partial<Record<keyof LimitsSpec, string>>>
  /** Defaults that nothing here can enforce (a declared one refuses the tool instead). */
  readonly unenforced: readonly (keyof LimitsSpec)[]
}

/** What the host offers to enforce limits with. */
export interface LimitFacts {
  readonly cgroups: CgroupHost
  /** Launches go through a spawner that places them: joins their cgroups and sets their rlimits before the exec (`Spawner.placement`). */
  readonly placed: boolean
}

const FIELDS = ['memory', 'pids', 'cpu', 'fileSize', 'openFiles', 'cpuTime'] as const

/** What enforces `field` here, or why nothing does. */
export function enforcer(field: keyof LimitsSpec, facts: LimitFacts): { by: string } | { why: string } {
  if (!facts.placed)
    return {
      why: 'launches do not go through a fork server here (@toolvisor/launch-native sets limits before the exec)',
    }
  if (field === 'fileSize') return { by: 'RLIMIT_FSIZE' }
  if (field === 'openFiles') return { by: 'RLIMIT_NOFILE' }
  if (field === 'cpuTime') return { by: 'RLIMIT_CPU' }
  const cgroups = facts.cgroups
  if (!cgroups.available) return { why: `no cgroup here: ${cgroups.reason}` }
  const controller: Controller = field
  const hierarchy = cgroups.hierarchies.find((h) => h.controllers.has(controller))
  if (hierarchy === undefined) return { why: `no ${controller} controller toolvisor may use here` }
  const file = {
    memory: ['memory.max', 'memory.limit_in_bytes'],
    pids: ['pids.max', 'pids.max'],
    cpu: ['cpu.max', 'cpu.cfs_quota_us'],
  }[field]
  return { by: `cgroup v${hierarchy.version} ${file[hierarchy.version === 2 ? 0 : 1]}` }
}

/**
 * The limits a launch runs under: the declared ones (none above its ceiling), the defaults for the
 * rest. A declared limit nothing here can enforce, or one above its ceiling, fails (`fail`, naming
 * the field); a default nothing can enforce is left out and listed in `unenforced`.
 */
export function applyLimits(
  declared: LimitsSpec | undefined,
  policy: LimitsPolicy,
  facts: LimitFacts,
  fail: Fail,
  base = HOUSE_LIMITS,
): AppliedLimits {
  const defaults = policy.defaults ?? base
  const ceilings = policy.ceilings ?? defaults
  const values: { -readonly [K in keyof LimitsSpec]: LimitsSpec[K] } = {}
  const enforcedBy: Partial<Record<keyof LimitsSpec, string>> = {}
  const unenforced: (keyof LimitsSpec)[] = []
  for (const field of FIELDS) {
    const asked = declared?.[field]
    const ceiling = ceilings[field]
    const where = `$.runtime.limits.${limitKey(field)}`
    if (asked !== undefined && ceiling !== undefined && asked > ceiling) {
      fail(
        'RUNTIME_ERR_LIMIT',
        where,
        `${show(field, asked)} is above the operator's ceiling of ${show(field, ceiling)} (toolvisor.json limits.ceilings.${limitKey(field)})`,
      )
    }
    const value = asked ?? defaults[field]
    if (value === undefined) continue
    const how = enforcer(field, facts)
    if ('why' in how) {
      if (asked !== undefined)
        fail(
          'RUNTIME_ERR_LIMIT',
          where,
          `cannot be enforced here: ${how.why}; the tool is refused rather than run without it`,
        )
      unenforced.push(field)
      continue
    }
    values[field] = value
    enforcedBy[field] = how.by
  }
  return {
    values,
    cgroup: cgroupPart(values),
    rlimits: facts.placed ? rlimitsOf(values) : [],
    enforcedBy,
    unenforced,
  }
}

function cgroupPart(values: LimitsSpec): CgroupLimits {
  return {
    ...(values.memory !== undefined ? { memory: values.memory } : {}),
    ...(values.pids !== undefined ? { pids: values.pids } : {}),
    ...(values.cpu !== undefined ? { cpu: values.cpu } : {}),
  }
}

/** The rlimits of a launch: the declared ones (never above this process's own hard limit), and no core files. */
function rlimitsOf(values: LimitsSpec): Rlimit[] {
  const hard = hardLimits()
  const capped = (resource: number, n: number) => Math.min(n, hard.get(resource) ?? Number.POSITIVE_INFINITY)
  const out: Rlimit[] = [{ resource: RLIMIT.core, soft: 0, hard: 0 }]
  if (values.fileSize !== undefined) {
    const n = capped(RLIMIT.fsize, values.fileSize)
    out.push({ resource: RLIMIT.fsize, soft: n, hard: n })
  }
  if (values.openFiles !== undefined) {
    const n = capped(RLIMIT.nofile, values.openFiles)
    out.push({ resource: RLIMIT.nofile, soft: n, hard: n })
  }
  if (values.cpuTime !== undefined) {
    // SIGXCPU at the limit (a tool may catch it and end cleanly), SIGKILL a second later.
    const n = Math.ceil(values.cpuTime)
    out.push({ resource: RLIMIT.cpu, soft: capped(RLIMIT.cpu, n), hard: capped(RLIMIT.cpu, n + 1) })
  }
  return out
}

let hardCache: Map<number, number> | undefined

/** This process's hard limits (`/proc/self/limits`): a non-root launch cannot go above them. */
function hardLimits(): Map<number, number> {
  if (hardCache !== undefined) return hardCache
  const rows: [number, RegExp][] = [
    [RLIMIT.cpu, /^Max cpu time\s+\S+\s+(\S+)/m],
    [RLIMIT.fsize, /^Max file size\s+\S+\s+(\S+)/m],
    [RLIMIT.nofile, /^Max open files\s+\S+\s+(\S+)/m],
  ]
  let text = ''
  try {
    text = readFileSync('/proc/self/limits', 'utf8')
  } catch {
    // unknown: the launch fails with EPERM and says so
  }
  hardCache = new Map()
  for (const [resource, pattern] of rows) {
    const value = pattern.exec(text)?.[1]
    if (value !== undefined && value !== 'unlimited') hardCache.set(resource, Number(value))
  }
  return hardCache
}

/** A limit as people read it: `256 MiB`, `64 processes`, `0.5 CPU`, `2 s`. */
export function show(field: keyof LimitsSpec, value: number): string {
  if (field === 'memory' || field === 'fileSize') return bytes(value)
  if (field === 'pids') return `${value} processes`
  if (field === 'openFiles') return `${value} open files`
  if (field === 'cpu') return `${value} CPU`
  return `${value} s`
}

/** Bytes in the largest binary unit that keeps them whole, else one decimal (`256 MiB`, `1.5 GiB`). */
export function bytes(n: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB']
  let unit = 0
  let value = n
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  const text = Number.isInteger(value) ? String(value) : value.toFixed(1)
  return `${text} ${units[unit]}`
}
