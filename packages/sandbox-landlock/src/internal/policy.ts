import { realpathSync } from 'node:fs'
import type { Qualification, RunAsTarget, SandboxPolicy } from '@toolvisor/process-runtime'
import type { LauncherStatus, PidNamespace } from './launcher.js'

/** The Landlock ABI from which TCP bind and connect can be denied (a second wall under `net: none`). */
export const tcpRulesAbi = 4

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

/**
 * How the launcher is told a grant: by path (the preflight at load), or by a descriptor the
 * runtime opens and checks at each start (`descriptor(path)` numbers it).
 */
export type GrantBy = 'path' | { readonly descriptor: (path: string) => number }

/** What the launcher found of this kernel that shapes its arguments. */
export interface KernelFeatures {
  /** The Landlock ABI qualified (and required: `--expect-abi`). */
  readonly abi: number
  /** Whether each run gets a pid namespace (`--pid-ns`: required then, so what runs is what was qualified). */
  readonly pidNamespace: PidNamespace
}

/** The launcher's arguments for a policy, up to and including `--`. */
export function launcherArgs(
  policy: SandboxPolicy,
  runAs: RunAsTarget | undefined,
  kernel: KernelFeatures,
  minimum: ExecMinimum,
  grants: GrantBy = 'path',
): string[] {
  const { abi } = kernel
  const args: string[] = ['--expect-abi', String(abi)]
  const grant = (mode: 'ro' | 'rw', path: string) => {
    if (grants === 'path') args.push(`--${mode}`, path)
    else args.push(`--${mode}-fd`, String(grants.descriptor(path)))
  }
  for (const path of minimum.read) args.push('--ro', path)
  for (const path of minimum.write) args.push('--rw', path)
  grant('ro', policy.toolDir)
  // A tool whose executable is a link out of its directory still needs to exec the target.
  if (!inside(policy.executable, policy.toolDir)) grant('ro', policy.executable)
  for (const path of policy.read) grant('ro', path)
  for (const path of policy.write) grant('rw', path)
  if (policy.tmp === 'shared') args.push('--rw', '/tmp')
  // No socket of any family (the filter always refuses AF_UNIX); TCP rules too where the ABI has them.
  if (policy.net === 'none') args.push(...(abi >= tcpRulesAbi ? ['--deny-tcp'] : []), '--no-inet')
  if (runAs !== undefined) {
    args.push('--user', runAs.group === undefined ? runAs.user : `${runAs.user}:${runAs.group}`)
  }
  // Where the probe made one: what the tool starts dies with it, and /proc shows only its own.
  if (kernel.pidNamespace.available) args.push('--pid-ns')
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
      reason: 'a private /tmp needs a mount namespace, which Landlock does not have',
      fix: `${otherMechanism}, or declare tmp: shared`,
    }
  }
  // Landlock rules add up and none can take a right back below a grant: a write grant above
  // /proc or /sys would make the kernel's settings writable (bwrap can mount them read-only).
  const kernel = policy.write.find((path) => ['/proc', '/sys'].some((dir) => inside(dir, path)))
  if (kernel !== undefined) {
    return {
      ok: false,
      field: 'fs.write',
      reason: `a write grant of ${kernel} would make /proc/sys and /sys writable, and Landlock cannot keep a path below a grant read-only`,
      fix: `${otherMechanism}, or grant narrower paths`,
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
