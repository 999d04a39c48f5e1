import { type LimitsSpec, limitKey } from '@toolvisor/describe-v2'
import { type AppliedLimits, type LaunchFacts, showLimit } from '@toolvisor/process-runtime'

/** The limits of a launch as `check` reports them: each value in force, what enforces it, and what is not enforced. */
export interface LimitsReport {
  /** Each limit in force, as written in toolvisor.json (`memory` in bytes). */
  readonly values: Readonly<Record<string, number>>
  /** What enforces each (`cgroup v2 memory.max`, `RLIMIT_FSIZE`). */
  readonly enforcedBy: Readonly<Record<string, string>>
  /** Defaults nothing here can enforce. */
  readonly notEnforced: readonly string[]
}

/** A launch's applied limits with the names toolvisor.json and `runtime.limits` use. */
export function limitsReport(limits: AppliedLimits): LimitsReport {
  const rename = <T>(record: Readonly<Partial<Record<keyof LimitsSpec, T>>>) =>
    Object.fromEntries(
      Object.entries(record)
        .filter(([, value]) => value !== undefined)
        .map(([key, value]) => [limitKey(key as keyof LimitsSpec), value as T]),
    )
  return {
    values: rename<number>(limits.values),
    enforcedBy: rename<string>(limits.enforcedBy),
    notEnforced: limits.unenforced.map(limitKey),
  }
}

/** How launches are contained here (decision 0097): the cgroup root, its version, how a tree is killed, the default limits. */
export function containmentReport(facts: LaunchFacts['containment']) {
  const cgroup = facts.cgroup
  return {
    cgroup: cgroup.available
      ? {
          available: true as const,
          root: cgroup.hierarchies[0]!.base,
          version: cgroup.hierarchies[0]!.version,
          hierarchies: cgroup.hierarchies,
          kill: cgroup.kill,
          ...(cgroup.gaps.length > 0 ? { gaps: cgroup.gaps } : {}),
        }
      : { available: false as const, reason: cgroup.reason },
    defaults: limitsReport(facts.limits),
  }
}

/** A limit as an operator reads it: `memory 2 GiB (cgroup v2 memory.max)` (keys as written). */
function limitText(key: string, value: number, by: string | undefined): string {
  const field = key.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase()) as keyof LimitsSpec
  return `${key} ${field === 'pids' || field === 'openFiles' ? value : showLimit(field, value)}${by ? ` (${by})` : ''}`
}

/** The limits of a launch on one line: each in force and how, then what is not enforced. */
export function limitsLine(limits: LimitsReport): string {
  const inForce = Object.entries(limits.values).map(([key, value]) =>
    limitText(key, value, limits.enforcedBy[key]),
  )
  const text = inForce.length > 0 ? inForce.join(', ') : 'none'
  return limits.notEnforced.length > 0 ? `${text}; not enforced here: ${limits.notEnforced.join(', ')}` : text
}

/** The `containment` and `limits` lines of the runtime section. */
export function containmentLines(report: ReturnType<typeof containmentReport>): string[] {
  const cgroup = report.cgroup
  const where = cgroup.available
    ? `a cgroup per launch in ${cgroup.root} (${cgroup.hierarchies
        .map(
          (h) =>
            `v${h.version}${h.controllers.length > 0 ? `: ${h.controllers.join(', ')}` : ''}${h.base === cgroup.root ? '' : ` at ${h.base}`}`,
        )
        .join('; ')}), killed whole by ${cgroup.kill}`
    : `no cgroup (${cgroup.reason}): what a tool starts is found by its process group and its TOOLVISOR_PROCESS marker only (one that leaves its group and clears its environment escapes both; a sandbox's pid namespace still holds it), and nothing bounds memory or processes`
  return [
    `  containment: ${where}`,
    ...(cgroup.available && cgroup.gaps ? cgroup.gaps.map((gap) => `    not available: ${gap}`) : []),
    `  limits (default): ${limitsLine(report.defaults)}`,
  ]
}
