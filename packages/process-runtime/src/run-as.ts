import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { pinnedExecutable } from './executable.js'
import type { Launch, Qualification, RunAsMechanism, RunAsTarget } from './launchers.js'

const run = promisify(execFile)

/** Looks the user (and group) up with `id`/`getent`, so a typo fails at load, not at the first call. */
async function qualifyTarget(target: RunAsTarget, tool: string): Promise<Qualification> {
  try {
    await run('id', ['-u', target.user])
  } catch {
    return {
      ok: false,
      field: 'run_as',
      reason: `no such user "${target.user}"`,
      fix: `create the user or fix run_as.user`,
    }
  }
  if (target.group !== undefined) {
    try {
      await run('getent', ['group', target.group])
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
    await run(tool, ['--version'])
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

/**
 * `setpriv --reuid U --regid G --init-groups`: runs the launch as the user with their
 * supplementary groups (Node's own `spawn({uid, gid})` would drop them).
 */
export function setprivRunAs(options: { readonly setpriv?: string } = {}): RunAsMechanism {
  const setpriv = pinnedExecutable(options.setpriv ?? 'setpriv')
  return {
    name: 'setpriv',
    qualify: (target) => qualifyTarget(target, setpriv),
    wrap(launch: Launch, target: RunAsTarget): Launch {
      const group = target.group ?? target.user
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
  return {
    name: 'runuser',
    qualify: (target) => qualifyTarget(target, runuser),
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
