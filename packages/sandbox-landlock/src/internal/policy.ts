import { existsSync, readdirSync, realpathSync } from 'node:fs'
import type {
  NetworkRoute,
  ProtectedTarget,
  Qualification,
  RunAsTarget,
  SandboxPolicy,
} from '@toolvisor/launchers'
import type { LauncherStatus, PidNamespace } from './launcher.js'
import { netArgs, netRefusal } from './net-args.js'

export { tcpRulesAbi } from './net-args.js'

/** What every tool gets so that it can start at all (sh, python3 and node tools, probed). */
export interface ExecMinimum {
  readonly read: readonly string[]
  readonly write: readonly string[]
}

/**
 * `/usr` and `/etc` read-only, `/dev/zero`, `/dev/random` and `/dev/urandom` readable, `/dev/null` writable. `/bin`, `/sbin`, `/lib*` are added only when
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
  // The character devices every program may expect, as bwrap's own /dev has them: randomness (git
  // reads /dev/urandom), zeroes; each a rule of its own, never /dev whole (disks, the console).
  for (const device of ['/dev/zero', '/dev/random', '/dev/urandom']) {
    if (existsSync(device)) read.push(device)
  }
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

/** One rule of the ruleset: read-only or with every right, by path or (a grant of the policy) by descriptor. */
interface Rule {
  readonly mode: 'ro' | 'rw'
  readonly path: string
  /** A grant of the policy (the tool's directory, its executable, fs.read, fs.write): by descriptor when asked. */
  readonly grant: boolean
}

/** The rules of a policy, before toolvisor's own paths are left out of them. */
function rulesOf(policy: SandboxPolicy, minimum: ExecMinimum): Rule[] {
  const rules: Rule[] = [
    ...minimum.read.map((path): Rule => ({ mode: 'ro', path, grant: false })),
    ...minimum.write.map((path): Rule => ({ mode: 'rw', path, grant: false })),
    { mode: 'ro', path: policy.toolDir, grant: true },
  ]
  // A tool whose executable is a link out of its directory still needs to exec the target.
  if (!inside(policy.executable, policy.toolDir))
    rules.push({ mode: 'ro', path: policy.executable, grant: true })
  for (const path of policy.read) rules.push({ mode: 'ro', path, grant: true })
  for (const path of policy.write) rules.push({ mode: 'rw', path, grant: true })
  if (policy.tmp === 'shared') rules.push({ mode: 'rw', path: '/tmp', grant: false })
  return rules
}

/** An entry of a directory, as `readAround` needs it (links are never followed). */
export interface DirEntry {
  readonly name: string
  readonly kind: 'dir' | 'link' | 'other'
}

/** The entries of a directory on the host; none when it cannot be read (then nothing there is granted). */
export function listHost(dir: string): DirEntry[] {
  try {
    return readdirSync(dir, { withFileTypes: true }).map((entry) => ({
      name: entry.name,
      kind: entry.isSymbolicLink() ? 'link' : entry.isDirectory() ? 'dir' : 'other',
    }))
  } catch {
    return []
  }
}

/**
 * Read rules for `root` that leave `hidden` out (paths strictly below `root`; decision 0095):
 * instead of one rule for `root`, one for every entry of each directory on the way down to a hidden
 * path, except the entry that leads to it. Landlock grants a hierarchy, so a rule on `/` would reach
 * toolvisor's state by any path (`/proc/PID/root`, a link); a hierarchy without a rule is out of
 * reach however it is named. Links are skipped, never followed (what one leads to is granted, or
 * not, on its own). An entry made after the start is not granted to that run.
 */
export function readAround(
  root: string,
  hidden: readonly string[],
  list: (dir: string) => readonly DirEntry[] = listHost,
): string[] {
  const rules: string[] = []
  const walk = (dir: string, below: readonly string[]): void => {
    for (const entry of list(dir)) {
      const path = dir === '/' ? `/${entry.name}` : `${dir}/${entry.name}`
      if (below.includes(path)) continue
      const deeper = below.filter((hiddenPath) => inside(hiddenPath, path))
      if (deeper.length > 0) {
        if (entry.kind === 'dir') walk(path, deeper)
        continue
      }
      if (entry.kind !== 'link') rules.push(path)
    }
  }
  walk(root, hidden)
  return rules
}

/** What the launcher found of this kernel that shapes its arguments. */
export interface KernelFeatures {
  /** The Landlock ABI qualified (and required: `--expect-abi`). */
  readonly abi: number
  /** Whether each run gets a pid namespace (`--pid-ns`: required then, so what runs is what was qualified). */
  readonly pidNamespace: PidNamespace
}

/** How `launcherArgs` names grants and finds what it needs beyond the policy. */
export interface ArgsOptions {
  /** By path (the preflight) or by a descriptor the runtime opens (`wrap`); default: by path. */
  readonly grants?: GrantBy
  /** The entries of a host directory (for read rules narrowed around toolvisor's own paths). */
  readonly list?: (dir: string) => readonly DirEntry[]
  /**
   * The protected paths of this launch (`protectedTargets`), kept read-only in the launcher's
   * mount namespace; none for the preflight, whose masks would leave placeholders behind.
   */
  readonly protect?: readonly ProtectedTarget[]
  /** Where the proxy of a network allow list is (`Launch.network`, of kind `port`); required then. */
  readonly network?: NetworkRoute
}

/** The launcher's arguments for a policy, up to and including `--`. */
export function launcherArgs(
  policy: SandboxPolicy,
  runAs: RunAsTarget | undefined,
  kernel: KernelFeatures,
  minimum: ExecMinimum,
  { grants = 'path', list = listHost, protect = [], network }: ArgsOptions = {},
): string[] {
  const { abi } = kernel
  const args: string[] = ['--expect-abi', String(abi)]
  const secrets = (policy.own ?? []).filter((own) => own.kind === 'secret').map((own) => own.path)
  for (const rule of rulesOf(policy, minimum)) {
    const hidden = secrets.filter((secret) => secret !== rule.path && inside(secret, rule.path))
    // `refusal` turned away a writable rule above a secret; a read rule is narrowed around it.
    if (hidden.length > 0 && rule.mode === 'ro') {
      for (const path of readAround(rule.path, hidden, list)) args.push('--ro', path)
    } else if (rule.grant && grants !== 'path') {
      args.push(`--${rule.mode}-fd`, String(grants.descriptor(rule.path)))
    } else {
      args.push(`--${rule.mode}`, rule.path)
    }
  }
  args.push(...netArgs(policy, abi, network))
  if (runAs !== undefined) {
    args.push('--user', runAs.group === undefined ? runAs.user : `${runAs.user}:${runAs.group}`)
  }
  // Where the probe made one: what the tool starts dies with it, and /proc shows only its own.
  if (kernel.pidNamespace.available) {
    args.push('--pid-ns')
    // Its mount namespace keeps the protected paths (decision 0096); without one they are a gap.
    for (const target of protect) args.push(overFlag(target), target.path)
    // And the installation below a writable rule read-only (without one, `refusal` turned it away).
    for (const path of writableCode(policy, minimum)) args.push('--ro-over', path)
  }
  args.push('--')
  return args
}

/** The paths of toolvisor's installation that a writable rule of the policy holds. */
function writableCode(policy: SandboxPolicy, minimum: ExecMinimum): string[] {
  const writable = rulesOf(policy, minimum).filter((rule) => rule.mode === 'rw')
  return (policy.own ?? [])
    .filter((own) => own.kind === 'code' && writable.some((rule) => inside(own.path, rule.path)))
    .map((own) => own.path)
}

/** The launcher's flag that keeps a protected path: read-only over it, or a placeholder where it is missing. */
function overFlag(target: ProtectedTarget): string {
  if (target.state === 'there') return '--ro-over'
  return target.kind === 'dir' ? '--null-dir-over' : '--null-over'
}

/**
 * Why a policy's writable rule cannot be honoured: it holds one of toolvisor's own paths, which
 * the tool's user could reach (a secret) or change (the installation). Landlock rules add up and
 * none takes a right back below a grant, and narrowing a writable rule around the path would take
 * away the right to create and remove entries on the way down to it.
 */
function ownRefusal(
  policy: SandboxPolicy,
  minimum: ExecMinimum,
  mountNamespace: boolean,
): Qualification | undefined {
  for (const rule of rulesOf(policy, minimum)) {
    for (const own of policy.own ?? []) {
      const holds = inside(own.path, rule.path)
      if (!holds || (rule.mode === 'ro' && (own.kind === 'code' || own.path !== rule.path))) continue
      // The installation only needs to stay unchanged: a mount namespace keeps it read-only.
      if (own.kind === 'code' && mountNamespace) continue
      const field = policy.write.includes(rule.path) ? 'fs.write' : rule.path === '/tmp' ? 'tmp' : 'mechanism'
      const what = field === 'tmp' ? '/tmp (tmp: shared makes it writable)' : `the write grant ${rule.path}`
      return {
        ok: false,
        field,
        reason: `${own.path}, ${own.what}, lies in ${what}: Landlock cannot keep a path below a writable grant out of reach`,
        fix:
          field === 'tmp'
            ? `${otherMechanism}, declare tmp: private with bwrap, or keep ${own.path} out of /tmp`
            : `${otherMechanism}, or grant narrower paths that leave ${own.path} out`,
      }
    }
  }
  return undefined
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
  minimum?: ExecMinimum,
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
  const net = netRefusal(policy, status.abi, otherMechanism)
  if (net !== undefined) return net
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
  // The exec minimum is what the mechanism computed once; the rules are only looked at for own paths.
  const own =
    (policy.own ?? []).length === 0
      ? undefined
      : ownRefusal(policy, minimum ?? execMinimum(), status.pidNamespace.available)
  if (own !== undefined) return own
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
