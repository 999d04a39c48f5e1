import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { CLEAN_ENVIRONMENT, pinnedExecutable, type RunAsTarget } from '@toolvisor/launchers'
import { lookupAccount } from './accounts.js'

const run = promisify(execFile)

/** Refuses the declaration (it throws): the error's code, the field refused, and why. */
export type RunAsRefusal = (code: 'RUNTIME_ERR_RUN_AS_NOT_ALLOWED', field: string, reason: string) => never

/** The entry of `runAsAllow` that allows any user but root (decision 0092). */
export const ANY_USER_BUT_ROOT = '*'

/**
 * Refuses, through `fail`, a tool's own `run_as` the operator did not allow (decision 0092, F9 of
 * the 2026-12-01 review: a tool's declaration is the adversary's, and `run_as: root` was obeyed as
 * soon as a run_as mechanism was configured). The user must be listed in `allow` by its name, or
 * `allow` must hold `*`: any user but root, so a user whose uid is 0 (whatever it is called) only
 * by its own name. A group the declaration names must be one the user already belongs to: a
 * group is a grant as much as a user is. An operator's own processes (`preparePlain`) and the
 * sandbox user are the operator's choices and are not checked here.
 */
export async function refuseUnlistedRunAs(
  target: RunAsTarget,
  allow: readonly string[],
  fail: RunAsRefusal,
): Promise<void> {
  const listed = allow.includes(target.user)
  if (!listed && !allow.includes(ANY_USER_BUT_ROOT)) {
    const shown = allow.length === 0 ? 'none' : allow.join(', ')
    fail(
      'RUNTIME_ERR_RUN_AS_NOT_ALLOWED',
      '$.runtime.run_as',
      `the tool asks to run as "${target.user}", a user the operator does not allow (runAsAllow: ${shown}): add it to runAsAllow (--run-as-allow ${target.user}) to allow it`,
    )
  }
  const account = await lookupAccount(target.user)
  if ('missing' in account) return // no such user: the run_as mechanism's qualify says so
  if (!listed && account.uid === 0) {
    fail(
      'RUNTIME_ERR_RUN_AS_NOT_ALLOWED',
      '$.runtime.run_as',
      `the tool asks to run as "${target.user}" (uid 0): "*" in runAsAllow allows any user but root; add "${target.user}" itself to runAsAllow (--run-as-allow ${target.user}) to allow it`,
    )
  }
  if (target.group !== undefined && !(await isMember(target.user, target.group))) {
    fail(
      'RUNTIME_ERR_RUN_AS_NOT_ALLOWED',
      '$.runtime.run_as',
      `the tool asks for the group "${target.group}", which "${target.user}" does not belong to: add the user to it (usermod -aG ${target.group} ${target.user}), or drop run_as.group from the tool`,
    )
  }
}

/** Whether `group` (a name or a gid) is among `user`'s groups, primary and supplementary. */
async function isMember(user: string, group: string): Promise<boolean> {
  const found = await lookupAccount(user, group)
  if ('missing' in found) return true // no such group: the run_as mechanism's qualify says so
  try {
    const { stdout } = await run(pinnedExecutable('id'), ['-G', '--', user], { env: CLEAN_ENVIRONMENT })
    return stdout.trim().split(/\s+/).map(Number).includes(found.gid)
  } catch {
    return false
  }
}
