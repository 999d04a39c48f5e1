import { execFile, execFileSync } from 'node:child_process'
import { promisify } from 'node:util'
import {
  CLEAN_ENVIRONMENT,
  type Launch,
  pinnedExecutable,
  type Qualification,
  type RunAsMechanism,
  type RunAsTarget,
} from '@toolvisor/launchers'

const run = promisify(execFile)

/**
 * Looks the user (and group) up, so a typo fails at load, not at the first call; resolves the
 * user's primary group id (what the switch uses when run_as names no group).
 */
async function qualifyTarget(
  target: RunAsTarget,
  tool: string,
  known: Map<string, UserGroups>,
): Promise<Qualification> {
  const id = pinnedExecutable('id')
  try {
    const gid = (await run(id, ['-g', '--', target.user], { env: CLEAN_ENVIRONMENT })).stdout.trim()
    const names = (await run(id, ['-Gn', '--', target.user], { env: CLEAN_ENVIRONMENT })).stdout
    known.set(target.user, { gid, names: names.trim().split(/\s+/).filter(Boolean) })
  } catch {
    return {
      ok: false,
      field: 'run_as',
      reason: `no such user "${target.user}"`,
      fix: 'create the user or fix run_as.user',
    }
  }
  if (target.group !== undefined) {
    try {
      await run(pinnedExecutable('getent'), ['group', '--', target.group], { env: CLEAN_ENVIRONMENT })
    } catch {
      return {
        ok: false,
        field: 'run_as',
        reason: `no such group "${target.group}"`,
        fix: 'fix run_as.group',
      }
    }
  }
  try {
    await run(tool, ['--version'], { env: CLEAN_ENVIRONMENT })
  } catch {
    return {
      ok: false,
      field: 'run_as',
      reason: `${tool} cannot be run here`,
      fix: `install ${tool} (util-linux)`,
    }
  }
  if (process.geteuid?.() !== 0) {
    return {
      ok: false,
      field: 'run_as',
      reason: `switching to "${target.user}" needs root; toolvisor runs as uid ${process.geteuid?.()}`,
      fix: 'run toolvisor as root, or drop run_as from the tool',
    }
  }
  return { ok: true }
}

/** A user's primary group id and the names of all its groups (`id -g`, `id -Gn`). */
interface UserGroups {
  readonly gid: string
  readonly names: readonly string[]
}

/** The groups of a user that was never qualified (a host calling `wrap` directly). */
function groupsOf(user: string, known: Map<string, UserGroups>): UserGroups {
  const cached = known.get(user)
  if (cached !== undefined) return cached
  const id = (args: string[]) =>
    execFileSync(pinnedExecutable('id'), [...args, '--', user], {
      encoding: 'utf8',
      env: CLEAN_ENVIRONMENT,
    }).trim()
  try {
    return { gid: id(['-g']), names: id(['-Gn']).split(/\s+/).filter(Boolean) }
  } catch {
    return { gid: user, names: [] } // no such user: the mechanism says so when it runs
  }
}

/**
 * `setpriv --reuid U --regid G --init-groups`: runs the launch as the user with their
 * supplementary groups (Node's own `spawn({uid, gid})` would drop them). G is run_as.group, else
 * the user's primary group (`nobody`'s is `nogroup`, not a group named like the user).
 */
export function setprivRunAs(options: { readonly setpriv?: string } = {}): RunAsMechanism {
  const setpriv = pinnedExecutable(options.setpriv ?? 'setpriv')
  const known = new Map<string, UserGroups>()
  return {
    name: 'setpriv',
    qualify: (target) => qualifyTarget(target, setpriv, known),
    wrap(launch: Launch, target: RunAsTarget): Launch {
      const group = target.group ?? groupsOf(target.user, known).gid
      return {
        ...launch,
        file: setpriv,
        args: ['--reuid', target.user, '--regid', group, '--init-groups', '--', launch.file, ...launch.args],
      }
    },
  }
}

/**
 * `runuser -u U [-g G -G ...] --`: the util-linux alternative (a PAM session). runuser drops the
 * supplementary groups when given a primary one, so with run_as.group every group of the user is
 * passed again with `-G`.
 */
export function runuserRunAs(options: { readonly runuser?: string } = {}): RunAsMechanism {
  const runuser = pinnedExecutable(options.runuser ?? 'runuser')
  const known = new Map<string, UserGroups>()
  return {
    name: 'runuser',
    qualify: (target) => qualifyTarget(target, runuser, known),
    wrap(launch: Launch, target: RunAsTarget): Launch {
      const supplementary = () => groupsOf(target.user, known).names.flatMap((name) => ['-G', name])
      const group = target.group === undefined ? [] : ['-g', target.group, ...supplementary()]
      return {
        ...launch,
        file: runuser,
        args: ['-u', target.user, ...group, '--', launch.file, ...launch.args],
      }
    },
  }
}
