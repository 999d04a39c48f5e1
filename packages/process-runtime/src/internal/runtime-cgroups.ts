import {
  type CgroupHost,
  type CgroupLimits,
  type CgroupPlacement,
  Containment,
  cgroupHost,
  isSameProcess,
  reapOrphanCgroups,
} from '@toolvisor/containment'
import { type RunState, sparedOf } from '@toolvisor/run-state'
import type { ContainmentFacts } from '../types.js'

/**
 * The cgroups of this runtime instance, when launches can be put in one before their exec (the
 * fork server does it): `<base>/<runId>` in each hierarchy, recorded in the run directory for the
 * watchdog and the next start; what crashed runtimes left there is killed first.
 */
export function containmentOf(
  option: string | false | undefined,
  state: RunState,
  {
    server,
    next,
  }: { server: () => CgroupPlacement | undefined; next: () => readonly [string, CgroupLimits] },
  { graceMs, stateDir }: { readonly graceMs: number; readonly stateDir: string },
  warn: (line: string) => void,
): Containment | string {
  const host = cgroupHost(option)
  if (!host.available) return host.reason
  if (server() === undefined)
    return 'launches do not go through a fork server here (@toolvisor/launch-native puts each in its cgroup before its exec)'
  // A kept process's cgroup is spared while its keeper lives (decision 0113).
  const killed = reapOrphanCgroups(host, graceMs, (run) => sparedOf(stateDir, run).leaves)
  if (killed > 0) warn(`killed ${killed} processes left in the cgroups of runtimes that are gone`)
  try {
    const containment = new Containment(host, state.runId, server, next)
    state.note('cgroups.json', JSON.stringify({ dirs: containment.runDirs, kill: host.kill }))
    return containment
  } catch (error) {
    warn(`no cgroup per launch: ${(error as Error).message}`)
    return (error as Error).message
  }
}

export function cgroupFacts(host: CgroupHost): ContainmentFacts['cgroup'] {
  if (!host.available) return host
  return {
    available: true,
    hierarchies: host.hierarchies.map((h) => ({
      version: h.version,
      base: h.base,
      controllers: [...h.controllers],
    })),
    kill: host.kill,
    gaps: host.gaps,
  }
}

/** A run whose runtime is still alive (its id starts with the runtime's pid and start time). */
export function runLives(run: string): boolean {
  const match = /^(\d+)-(\d+)-/.exec(run)
  return match !== null && isSameProcess(Number(match[1]), match[2]!)
}
