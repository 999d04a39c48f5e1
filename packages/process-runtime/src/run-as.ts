import { execFile, execFileSync } from 'node:child_process'
import { promisify } from 'node:util'
import { pinnedExecutable } from './executable.js'
import {
  CLEAN_ENVIRONMENT,
  type Launch,
  type Qualification,
  type RunAsMechanism,
  type RunAsTarget,
} from './launchers.js'

const run = promisify(execFile)

/**
 * Looks the user (and group) up, so a typo fails at load, not at the first call; resolves the
 * user's primary group id (what the switch uses when run_as names no group).
 */
async function qualifyTarget(
  target: RunAsTarget,
  tool: string,
  primary: Map<string, string>,
): Promise<Qualification> {
  const id = pinnedExecutable('id')
  try {
    const { stdout } = await run(id, ['-g', '--', target.user], { env: CLEAN_ENVIRONMENT })
    primary.set(target.user, stdout.trim())
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

/** The primary group id of a user that was never qualified (a host calling `wrap` directly). */
function primaryGroup(user: string): string {
  try {
    return execFileSync(pinnedExecutable('id'), ['-g', '--', user], {
      encoding: 'utf8',
      env: CLEAN_ENVIRONMENT,
    }).trim()
  } catch {
    return user // no such user: setpriv says so when it runs
  }
}

/**
 * `setpriv --reuid U --regid G --init-groups`: runs the launch as the user with their
 * supplementary groups (Node's own `spawn({uid, gid})` would drop them). G is run_as.group, else
 * the user's primary group (`nobody`'s is `nogroup`, not a group named like the user).
 */
export function setprivRunAs(options: { readonly setpriv?: string } = {}): RunAsMechanism {
  const setpriv = pinnedExecutable(options.setpriv ?? 'setpriv')
  const primary = new Map<string, string>()
  return {
    name: 'setpriv',
    qualify: (target) => qualifyTarget(target, setpriv, primary),
    wrap(launch: Launch, target: RunAsTarget): Launch {
      const group = target.group ?? primary.get(target.user) ?? primaryGroup(target.user)
      return {
        ...launch,
        file: setpriv,
        args: ['--reuid', target.user, '--regid', group, '--init-groups', '--', launch.file, ...launch.args],
      }
    },
  }
}

/** `runuser -u U [-g G] --`: the util-linux alternative (PAM session, supplementary groups kept). */
export function runuserRunAs(options: { readonly runuser?: string } = {}): RunAsMechanism {
  const runuser = pinnedExecutable(options.runuser ?? 'runuser')
  const primary = new Map<string, string>()
  return {
    name: 'runuser',
    qualify: (target) => qualifyTarget(target, runuser, primary),
    wrap(launch: Launch, target: RunAsTarget): Launch {
      const group = target.group === undefined ? [] : ['-g', target.group]
      return {
        ...launch,
        file: runuser,
        args: ['-u', target.user, ...group, '--', launch.file, ...launch.args],
      }
    },
  }
}
