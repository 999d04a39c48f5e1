import { existsSync, readFileSync, realpathSync } from 'node:fs'
import { isAbsolute } from 'node:path'
import type { Readable } from 'node:stream'
import type {
  ExtraFd,
  Launch,
  MechanismDescription,
  Placeholder,
  ProcessControl,
  Qualification,
  RunAsTarget,
  SandboxMechanism,
  SandboxPolicy,
  SpawnedChild,
} from '@toolvisor/launchers'
import { grantFd, isAllowList, Placeholders, pinnedExecutable, protectedTargets } from '@toolvisor/launchers'
import { syscallFilter } from '@toolvisor/syscall-filter'
import { BwrapError } from './errors.js'
import type { Mount } from './internal/args.js'
import { mountArgs, mounts, namespaceArgs, showsHost } from './internal/args.js'
import type { HostEntry } from './internal/host.js'
import { hostLayout } from './internal/host.js'
import { readChildPid } from './internal/info.js'
import { kindOnHost } from './internal/own.js'
import type { Ids, PreflightResult } from './internal/preflight.js'
import { preflight, resolveIds } from './internal/preflight.js'
import { protectMounts } from './internal/protect.js'

/** Options of {@link bwrapMechanism}. */
export interface BwrapOptions {
  /** The bwrap binary: a path, or a name searched on the runtime's PATH once (default `bwrap`). */
  readonly bwrap?: string
}

const FIX_MISSING =
  'install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap), or set the sandbox-bwrap "bwrap" path'
const FIX_USERNS =
  'use bubblewrap >= 0.8.0 and enable unprivileged user namespaces for the user bwrap runs as ' +
  '(sysctl user.max_user_namespaces > 0; Debian: kernel.unprivileged_userns_clone=1; ' +
  'Ubuntu: kernel.apparmor_restrict_unprivileged_userns=0)'
const FIX_NET =
  'allow network namespaces for the user bwrap runs as (sysctl user.max_net_namespaces > 0), ' +
  'or pick a mechanism that honours net: none'

const ENFORCES: MechanismDescription['enforces'] = {
  'fs.read':
    'mount namespace: each path bound read-only (--ro-bind); writes under it give EROFS; paths outside the ' +
    "grants, /usr, /etc and the tool's directory do not exist (ENOENT)",
  'fs.write':
    'each path bound read-write (--bind) after the tmp mounts; the rest of the tree is read-only (--remount-ro /); ' +
    'files are owned on the host by the user bwrap runs as',
  net:
    'net: none: a network namespace with only lo (--unshare-net), and socket() of every family EPERM; an allow list: ' +
    "the runtime's network namespace with only lo, where 127.0.0.1:3128 is bridged to toolvisor's proxy (HTTP, CONNECT, " +
    'SOCKS5), which lets through only the names listed, and published ports bridged from the host loopback; net: host: ' +
    'the host network, socket() only for AF_INET, AF_INET6 and netlink route; always: the syscall allowlist of ' +
    '@toolvisor/syscall-filter (a call not on it ENOSYS; namespaces, mounts, keyrings, bpf, perf_event_open, ' +
    'userfaultfd, ptrace and the other refused families EPERM; clone3 and io_uring ENOSYS; no AF_UNIX socket and ' +
    "no datagram socketpair; SysV IPC only in the sandbox's own IPC namespace; a process of another ABI, i386 or " +
    'arm32, killed); /proc/sys, /proc/sysrq-trigger, /proc/irq, /proc/bus read-only',
  tmp: 'tmp: private: fresh tmpfs at /tmp and /var/tmp (mode 1777), gone when the tool exits; tmp: shared: the host /tmp bound read-write; /dev/shm is always a private tmpfs',
  run_as:
    'not switched by bwrap: the run_as mechanism starts bwrap as the user (unprivileged user namespace, ' +
    'supplementary groups kept, CapEff 0); as root, a tool that declares no run_as runs as the sandbox user',
}

const GAPS = [
  'net (an allow list): a program that ignores the proxy variables reaches nothing (no route), and its attempt is not marked: only what reaches the proxy is',
  'no unix socket at all (socket(AF_UNIX) and datagram socketpair() are refused for every tool, so none outside the grants is reachable): a tool that talks to a local daemon by socket cannot run under bwrap',
  'syscalls: only the allowlist (a call not on it is ENOSYS, callers fall back); a tool that needs namespaces, mounts, ptrace, bpf or perf_event_open (a container runtime, a debugger, a profiler) cannot run under bwrap',
  'fs: paths outside the grants are hidden (ENOENT), not denied (EACCES) as under Landlock',
  "fs: /usr and /etc are readable whole: what the tool's user may read there (as root, tools run as the sandbox user unless they declare run_as)",
]

/**
 * The bubblewrap mechanism (`--sandbox bwrap`): a mount namespace holding only the exec minimum,
 * the tool's directory and the declared paths, a pid and IPC namespace, `net: none` as a network
 * namespace plus no socket at all, the syscall allowlist of `@toolvisor/syscall-filter`, every
 * capability dropped, and a sandbox that dies with the runtime. It never switches users
 * (`handlesRunAs: false`): the run_as mechanism starts bwrap itself as the user, so files are
 * written with the user's uid on the host.
 *
 * @example
 * ```ts
 * const bwrap = bwrapMechanism()
 * const verdict = await bwrap.qualify(policy, undefined) // { ok: true } or the field it cannot honour
 * const launch = bwrap.wrap({ file: '/tools/t/run', args: [], env, cwd: '/tools/t', extraFds: [] }, policy, undefined)
 * ```
 */
export function bwrapMechanism(options: BwrapOptions = {}): SandboxMechanism {
  return new Bwrap(options.bwrap ?? 'bwrap')
}

class Bwrap implements SandboxMechanism {
  readonly name = 'bwrap'
  readonly handlesRunAs = false
  readonly netRoute = 'namespace'
  readonly #requested: string
  #bwrap: string | undefined
  #layout: HostEntry[] | undefined
  readonly #preflights = new Map<string, Promise<PreflightResult>>()
  readonly #programs = new Map<'host' | 'none', Uint8Array>()
  /** The placeholders of protected paths that launches of this mechanism have. */
  readonly #placeholders = new Placeholders()

  constructor(requested: string) {
    this.#requested = requested
  }

  async qualify(policy: SandboxPolicy, runAs: RunAsTarget | undefined): Promise<Qualification> {
    let ids: Ids | undefined
    if (runAs !== undefined && process.geteuid?.() === 0) {
      const resolved = await resolveIds(runAs)
      if (typeof resolved === 'string')
        return { ok: false, field: 'run_as', reason: resolved, fix: 'create the user, or fix runtime.run_as' }
      ids = resolved
    }
    const base = await this.#check('host', ids)
    if (!base.ok) return { ok: false, field: 'mechanism', ...mechanismFailure(base) }
    if (policy.net === 'none') {
      const net = await this.#check('none', ids)
      if (!net.ok) return { ok: false, field: 'net', reason: net.reason, fix: FIX_NET }
    }
    return { ok: true }
  }

  wrap(launch: Launch, policy: SandboxPolicy): Launch {
    checkPaths(policy)
    // An allow list runs in the runtime's network namespace, bridged to its proxy: never the host's.
    const net = isAllowList(policy.net) ? 'host' : policy.net
    if (net !== policy.net && launch.network?.kind !== 'namespace') {
      throw new BwrapError(
        'BWRAP_ERR_NETWORK',
        `the network allow list of ${policy.executable} needs the runtime's network namespace, and this launch has none: not started`,
      )
    }
    const extraFds: ExtraFd[] = [...launch.extraFds]
    const targets = protectedTargets(policy, this.#placeholders.held)
    const list = mounts(policy, this.#host(), kindOnHost, protectMounts(targets))
    // Grants are bound from descriptors the runtime opens and checks at spawn.
    const mountList = mountArgs(list, (mount) => {
      extraFds.push(mount.from?.fd ?? grantFd(policy, mount.path))
      return 2 + extraFds.length
    })
    const held = this.#placeholders.hold(targets, launch.release)
    const fdArgs = ['--seccomp', String(3 + extraFds.length)]
    extraFds.push({ kind: 'data', data: this.#program(net) })
    // The info fd is the last pipe: control() finds it there.
    fdArgs.push('--info-fd', String(3 + extraFds.length))
    extraFds.push({ kind: 'pipe' })
    // A write grant of / is the host's root, writable as declared: do not make it read-only.
    const readOnlyRoot = policy.write.includes('/') ? [] : ['--remount-ro', '/']
    const cwd = sandboxCwd(launch.cwd, policy, list)
    const sandbox = [
      ...namespaceArgs(net, launch.terminal !== undefined),
      ...mountList,
      ...fdArgs,
      '--chdir',
      cwd,
      ...readOnlyRoot,
    ]
    // bwrap starts (as the tool's user) where the tool will: a place the sandbox shows, which that
    // user can reach, unlike toolvisor's own working directory perhaps.
    return {
      ...launch,
      cwd,
      file: this.#binary(),
      args: [...sandbox, '--', launch.file, ...launch.args],
      extraFds,
      ...held,
    }
  }

  control(child: SpawnedChild): ProcessControl {
    let childPid: number | undefined
    const info = child.extraFds.findLast((fd): fd is Readable => fd !== undefined)
    if (info !== undefined) readChildPid(info, (pid) => (childPid = pid))
    return {
      signal(signal: NodeJS.Signals): boolean {
        if (childPid === undefined || !alive(childPid)) return false
        try {
          process.kill(-childPid, signal)
          return true
        } catch {
          return false
        }
      },
    }
  }

  holdPlaceholders(placeholders: readonly Placeholder[]): () => void {
    return this.#placeholders.again(placeholders)
  }

  async describe(): Promise<MechanismDescription> {
    const base = await this.#check('host', undefined)
    if (!base.ok) {
      return {
        name: 'bwrap',
        available: false,
        unavailable: mechanismFailure(base),
        enforces: ENFORCES,
        gaps: GAPS,
      }
    }
    const net = await this.#check('none', undefined)
    const gaps = net.ok ? GAPS : [`net: none cannot be honoured here: ${net.reason}`, ...GAPS]
    return { name: 'bwrap', available: true, enforces: ENFORCES, gaps }
  }

  /**
   * The syscall filter for `net` (ipc: namespaced, bwrap unshares IPC), built once per variant;
   * each launch gets its own copy of the bytes.
   */
  #program(net: 'host' | 'none'): Uint8Array {
    let program = this.#programs.get(net)
    if (program === undefined) {
      program = syscallFilter({ net, ipc: 'namespaced' })
      this.#programs.set(net, program)
    }
    return program.slice()
  }

  #binary(): string {
    this.#bwrap ??= pinnedExecutable(this.#requested)
    return this.#bwrap
  }

  #host(): HostEntry[] {
    this.#layout ??= hostLayout()
    return this.#layout
  }

  /** bwrap's preflight for a network mode and user, run once and remembered. */
  #check(net: 'host' | 'none', ids: Ids | undefined): Promise<PreflightResult> {
    const key = `${net}:${ids === undefined ? 'self' : `${ids.uid}:${ids.gid}`}`
    let result = this.#preflights.get(key)
    if (result === undefined) {
      result = preflight(this.#binary(), this.#host(), net, ids)
      this.#preflights.set(key, result)
    }
    return result
  }
}

function mechanismFailure(failed: { reason: string; spawned: boolean }): { reason: string; fix: string } {
  return { reason: failed.reason, fix: failed.spawned ? FIX_USERNS : FIX_MISSING }
}

/**
 * Whether the sandbox's pid 1 still runs. bwrap exits without reaping it, so once the tool is gone
 * it lingers as a zombie until the host's init reaps it, and a signal to its group would still
 * "succeed" while reaching nothing.
 */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1')
    return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2))
  } catch {
    return false
  }
}

/** Where the tool starts: the launch's cwd when the sandbox shows it as on the host, else the tool's directory. */
function sandboxCwd(cwd: string, policy: SandboxPolicy, list: readonly Mount[]): string {
  let real: string
  try {
    real = realpathSync.native(cwd) // one syscall: the JS walk lstats every component, on every start
  } catch {
    return policy.toolDir
  }
  return showsHost(real, list) ? real : policy.toolDir
}

/** The runtime resolved and checked these at load; a path that is now gone would make bwrap abort. */
function checkPaths(policy: SandboxPolicy): void {
  const paths: [string, string][] = [
    ['the tool directory', policy.toolDir],
    ['the executable', policy.executable],
    ...policy.read.map((path): [string, string] => ['runtime.sandbox.fs.read', path]),
    ...policy.write.map((path): [string, string] => ['runtime.sandbox.fs.write', path]),
  ]
  for (const [where, path] of paths) {
    if (!isAbsolute(path)) {
      throw new BwrapError(
        'BWRAP_ERR_RELATIVE_PATH',
        `${where} path "${path}" is not absolute (tool ${policy.executable}): the runtime must resolve sandbox paths before wrap`,
      )
    }
    if (!existsSync(path)) {
      throw new BwrapError(
        'BWRAP_ERR_PATH_MISSING',
        `${where} path ${path} does not exist (tool ${policy.executable}): create it, or remove it from the declaration`,
      )
    }
  }
}
