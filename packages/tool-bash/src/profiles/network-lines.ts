/**
 * The network lines of a bash result (decision 0112): the profile's hint for names blocked for not
 * being in the allow list, and the hosts a settled background task was refused.
 */

import { newestBytes } from '@toolvisor/process-runtime'
import type { TaskInfo } from '@toolvisor/tasks'
import type { Launch } from '../internal/launcher.js'
import { DENIAL_TAIL_BYTES, type SandboxMode } from '../modes.js'
import { blockedHosts } from '../network.js'
import { type BashServices, processOf } from './common.js'

/** The profile's network hint of a settled background task (decision 0112), when its connections were blocked. */
export function taskNetworkHint(services: BashServices, task: TaskInfo): string[] {
  const confined = services.confined.get(task.id)
  const tail = taskErrors(services, task)
  if (confined === undefined || tail === undefined) return []
  return networkLines(services, confined, tail)
}

/**
 * The hosts a settled background task, run under a confining mode, was refused for not being in
 * the allow list (decision 0112): read from the end of its stderr, as its denial is.
 */
export function taskBlocked(services: BashServices, task: TaskInfo): string[] {
  const confined = services.confined.get(task.id)
  const tail = taskErrors(services, task)
  if (confined === undefined || tail === undefined || !confines(confined.mode)) return []
  return blockedHosts(tail.toString('utf8'))
}

/** The end of a settled task's errors (its terminal's output on a terminal); undefined while it runs or when it never ran. */
export function taskErrors(services: BashServices, task: TaskInfo): Buffer | undefined {
  if (task.exit === undefined) return undefined
  const process = processOf(services, task.id, task.owner)
  if (process === undefined) return undefined
  const stream = process.terminal ? 'stdout' : 'stderr'
  return newestBytes(process.output, stream, { from: 0, max: DENIAL_TAIL_BYTES, final: true }).bytes
}

/** Whether a mode runs its commands behind the standing network (danger-full-access has the host's). */
function confines(mode: SandboxMode | undefined): boolean {
  return mode === 'read-only' || mode === 'workspace-write'
}

/**
 * The profile's network hint for a run under a confining mode whose errors show connections
 * blocked for not being in the allow list (decision 0112); none for refusals the operator's list
 * made (the deny list, a local address), nor in a profile that cannot ask for names.
 */
export function networkLines(services: BashServices, launch: Pick<Launch, 'mode'>, errors: Buffer): string[] {
  const hint = services.networkHint
  if (hint === undefined || !confines(launch.mode)) return []
  const tail = errors.subarray(Math.max(0, errors.length - DENIAL_TAIL_BYTES)).toString('utf8')
  const hosts = blockedHosts(tail)
  return hosts.length > 0 ? [hint(hosts)] : []
}

/** Whether a call may ask for network names: the standing network of the confining modes is an allow list. */
export function asksNames(services: BashServices): boolean {
  return services.modes.confining && typeof services.network !== 'string'
}
