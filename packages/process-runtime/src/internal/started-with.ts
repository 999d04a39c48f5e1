/**
 * The runtime a process was started with, resolved (spec §2.3: "the runtime it was started with,
 * resolved (which user, which envdir)"): what `processes status` shows of a handle or a task.
 */

import type { NetPolicy } from '@toolvisor/launchers'
import { selfAccount } from '@toolvisor/run-as'
import type { PreparedTool } from '../types.js'
import type { AppliedLimits } from './limits.js'
import { workingDirectory } from './process-util.js'

/** Who, where and under what a process runs, as its launch resolved it. */
export interface StartedWith {
  /** The user it runs as: its `run_as`, the sandbox user, or toolvisor's own. */
  readonly user: { readonly name: string; readonly uid: number; readonly gid: number }
  /** The working directory it started in. */
  readonly cwd: string
  /** The envdir its secrets were read from (absolute), when it has one. */
  readonly envdir?: string
  /** The mechanism that confines it and what it grants, when it is sandboxed. */
  readonly sandbox?: {
    readonly mechanism: string
    readonly read: readonly string[]
    readonly write: readonly string[]
    readonly net: NetPolicy
    readonly tmp: string
  }
  /** The limits in force for its tree (decision 0097), when any. */
  readonly limits?: AppliedLimits['values']
}

/**
 * What `tool` started with `cwd` (the start's own, or the default `workingDirectory` picks)
 * resolves to; `undefined` cwd is resolved as the launch resolves it. Never throws: a working
 * directory the sandbox refuses is the launch's error, reported there; here it is the one asked.
 */
export function startedWith(
  tool: PreparedTool,
  cwd: string | undefined,
  limits: AppliedLimits | undefined,
): StartedWith {
  const account = tool.account ?? selfAccount()
  const policy = tool.sandbox?.policy
  let where: string
  try {
    where = workingDirectory(tool, cwd)
  } catch {
    where = cwd ?? process.cwd()
  }
  return {
    user: { name: account.name, uid: account.uid, gid: account.gid },
    cwd: where,
    ...(tool.envdir !== undefined ? { envdir: tool.envdir } : {}),
    ...(policy && tool.sandbox
      ? {
          sandbox: {
            mechanism: tool.sandbox.mechanism.name,
            read: policy.read,
            write: policy.write,
            net: policy.net,
            tmp: policy.tmp,
          },
        }
      : {}),
    ...(limits !== undefined && Object.keys(limits.values).length > 0 ? { limits: limits.values } : {}),
  }
}
