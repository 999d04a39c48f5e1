import { realpathSync } from 'node:fs'
import type { Qualification, RunAsTarget, SandboxPolicy } from '@toolvisor/process-runtime'
import type { LauncherStatus } from './launcher.js'

/** The Landlock ABI that can deny pathname unix sockets (fs RESOLVE_UNIX); `net: none` needs it. */
export const netNoneAbi = 9

/** What every tool gets so that it can start at all (sh, python3 and node tools, probed). */
export interface ExecMinimum {
  readonly read: readonly string[]
  readonly write: readonly string[]
}

/**
 * `/usr` and `/etc` read-only, `/dev/null` writable. `/bin`, `/sbin`, `/lib*` are added only when
 * they are real directories: on a usr-merged host they are links into `/usr`, which Landlock
 * follows, so `/usr` already covers them. `/etc` is there for the dynamic loader cache, users and
 * groups, name resolution and TLS configuration (node refuses to start without
 * `/etc/ssl/openssl.cnf`). `/proc` is not: sh, python3 and node start without it.
 */
export function execMinimum(): ExecMinimum {
  const read = ['/usr']
  for (const dir of ['/bin', '/sbin', '/lib', '/lib64', '/lib32', '/libx32']) {
    let real: string
    try {
      real = realpathSync(dir)
    } catch {
      continue
    }
    if (real !== '/usr' && !real.startsWith('/usr/')) read.push(dir)
  }
  read.push('/etc')
  return { read, write: ['/dev/null'] }
}

function inside(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith('/') ? dir : `${dir}/`)
}

/** The launcher's arguments for a policy, up to and including `--`. */
export function launcherArgs(
  policy: SandboxPolicy,
  runAs: RunAsTarget | undefined,
  abi: number,
  minimum: ExecMinimum,
): string[] {
  const args: string[] = []
  for (const path of minimum.read) args.push('--ro', path)
  for (const path of minimum.write) args.push('--rw', path)
  args.push('--ro', policy.toolDir)
  // A tool whose executable is a link out of its directory still needs to exec the target.
  if (!inside(policy.executable, policy.toolDir)) args.push('--ro', policy.executable)
  for (const path of policy.read) args.push('--ro', path)
  for (const path of policy.write) args.push('--rw', path)
  if (policy.tmp === 'shared') args.push('--rw', '/tmp')
  if (policy.net === 'none' && abi >= netNoneAbi) args.push('--deny-tcp', '--no-inet')
  if (runAs !== undefined) {
    args.push('--user', runAs.group === undefined ? runAs.user : `${runAs.user}:${runAs.group}`)
  }
  args.push('--')
  return args
}

const otherMechanism = 'use --sandbox bwrap (or --sandbox auto, which picks it for this tool)'

/**
 * Why the policy cannot be honoured here, or `ok`. Decided on the values, not only on `declared`:
 * a value other than the default can only come from a declaration, and checking the value never
 * lets a weaker sandbox through.
 */
export function refusal(
  policy: SandboxPolicy,
  runAs: RunAsTarget | undefined,
  status: LauncherStatus,
  euid: number | undefined,
): Qualification {
  if (!status.available) return { ok: false, field: 'mechanism', reason: status.reason, fix: status.fix }
  if (policy.tmp === 'private') {
    return {
      ok: false,
      field: 'tmp',
      reason: 'tmp: private needs a mount namespace, which Landlock does not have',
      fix: `${otherMechanism}, or declare tmp: shared`,
    }
  }
  if (policy.net === 'none' && status.abi < netNoneAbi) {
    return {
      ok: false,
      field: 'net',
      reason:
        `net: none needs Landlock ABI >= ${netNoneAbi} to also deny pathname unix sockets; ` +
        `this kernel has ABI ${status.abi} (TCP rules alone leave UDP and DNS open)`,
      fix: `${otherMechanism}, or run on a kernel with Landlock ABI >= ${netNoneAbi}`,
    }
  }
  if (runAs !== undefined && euid !== 0) {
    return {
      ok: false,
      field: 'run_as',
      reason: `switching to run_as user "${runAs.user}" needs root; toolvisor runs as uid ${euid ?? 'unknown'}`,
      fix: 'run toolvisor as root, or drop run_as from the tool',
    }
  }
  return { ok: true }
}
