import { execFile } from 'node:child_process'
import { accessSync, constants } from 'node:fs'
import { userInfo } from 'node:os'
import { promisify } from 'node:util'
import { CLEAN_ENVIRONMENT, pinnedExecutable } from '@toolvisor/launchers'

const run = promisify(execFile)

/** A user a tool runs as: who the name is on this host. */
export interface Account {
  readonly name: string
  readonly uid: number
  /** The primary group (or the group a run_as declaration named). */
  readonly gid: number
  readonly home: string
}

/** The user the runtime itself runs as. */
export function selfAccount(): Account {
  let info: { readonly username: string; readonly homedir: string } | undefined
  try {
    info = userInfo()
  } catch {
    info = undefined // a uid with no passwd entry
  }
  return {
    name: info?.username ?? String(process.geteuid?.() ?? ''),
    uid: process.geteuid?.() ?? -1,
    gid: process.getegid?.() ?? -1,
    home: info?.homedir ?? '/',
  }
}

/** Looks a user (and optionally a group by name) up with `getent`; `undefined` fields say what is missing. */
export async function lookupAccount(
  user: string,
  group?: string,
): Promise<Account | { readonly missing: 'user' | 'group' }> {
  const passwd = await getent('passwd', user)
  const fields = passwd?.split(':')
  if (fields === undefined || fields.length < 7) return { missing: 'user' }
  let gid = Number(fields[3])
  if (group !== undefined) {
    const entry = await getent('group', group)
    if (entry === undefined) return { missing: 'group' }
    gid = Number(entry.split(':')[2])
  }
  return { name: fields[0]!, uid: Number(fields[2]), gid, home: fields[5] || '/' }
}

async function getent(database: 'passwd' | 'group', key: string): Promise<string | undefined> {
  try {
    const { stdout } = await run(pinnedExecutable('getent'), [database, '--', key], {
      encoding: 'utf8',
      env: CLEAN_ENVIRONMENT,
    })
    return stdout.split('\n')[0]
  } catch {
    return undefined
  }
}

/** Every group id of `account` (its primary one and the supplementary ones `initgroups` gives it). */
export async function groupIdsOf(account: Account): Promise<number[]> {
  if (account.uid === process.geteuid?.())
    return [...new Set([account.gid, ...(process.getgroups?.() ?? [])])]
  try {
    const { stdout } = await run(pinnedExecutable('id'), ['-G', '--', account.name], {
      encoding: 'utf8',
      env: CLEAN_ENVIRONMENT,
    })
    return [...new Set([account.gid, ...stdout.trim().split(/\s+/).filter(Boolean).map(Number)])]
  } catch {
    return [account.gid]
  }
}

/** A path and the access a tool needs to it: any of `r`, `w`, `x`. */
export interface AccessNeed {
  readonly path: string
  readonly mode: string
}

/**
 * Which of `needs` `account` lacks, asked of the kernel (`access(2)` as that user, so modes,
 * groups, ACLs and read-only mounts all count): directly when the account is the runtime's own,
 * else through `setpriv` (one process for every path). Resolves with the needs not met.
 */
export async function missingAccess(account: Account, needs: readonly AccessNeed[]): Promise<AccessNeed[]> {
  if (needs.length === 0) return []
  if (account.uid === process.geteuid?.()) {
    return needs.filter((need) => {
      try {
        accessSync(need.path, modeBits(need.mode))
        return false
      } catch {
        return true
      }
    })
  }
  // Arguments come in pairs (mode, path); prints the index of each pair not met.
  const script =
    'i=0; while [ $# -gt 0 ]; do m=$1; p=$2; shift 2; ok=1; ' +
    'case $m in *r*) [ -r "$p" ] || ok=0;; esac; case $m in *w*) [ -w "$p" ] || ok=0;; esac; ' +
    'case $m in *x*) [ -x "$p" ] || ok=0;; esac; [ $ok = 1 ] || echo $i; i=$((i+1)); done'
  const args = [
    `--reuid=${account.uid}`,
    `--regid=${account.gid}`,
    '--init-groups',
    '--',
    '/bin/sh',
    '-c',
    script,
    'sh',
    ...needs.flatMap((need) => [need.mode, need.path]),
  ]
  const { stdout } = await run(pinnedExecutable('setpriv'), args, {
    encoding: 'utf8',
    env: CLEAN_ENVIRONMENT,
  })
  const failed = new Set(stdout.split('\n').filter(Boolean).map(Number))
  return needs.filter((_, i) => failed.has(i))
}

function modeBits(mode: string): number {
  let bits = constants.F_OK
  if (mode.includes('r')) bits |= constants.R_OK
  if (mode.includes('w')) bits |= constants.W_OK
  if (mode.includes('x')) bits |= constants.X_OK
  return bits
}
