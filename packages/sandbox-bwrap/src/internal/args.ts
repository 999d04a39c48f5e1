import type { ExtraFd, SandboxPolicy } from '@toolvisor/launchers'
import type { HostEntry } from './host.js'
import { kindOnHost, ownMounts, type PathKind } from './own.js'

/**
 * Namespaces and privileges, the same for every tool. `--unshare-user --disable-userns` is the
 * hardening Flatpak applies: the tool cannot create nested user namespaces (where it would hold
 * every capability again, a large kernel attack surface). `--cap-drop ALL` is passed whoever runs
 * bwrap: as root it is what stops a tool from remounting a read-only bind writable; when bwrap runs
 * as the sandbox or run_as user it changes nothing, except when that user is root.
 */
export function namespaceArgs(net: 'host' | 'none', terminal = false): string[] {
  return [
    '--unshare-user',
    '--disable-userns',
    '--die-with-parent',
    // On a terminal of its own (decision 0110) the tool keeps it as its controlling terminal: ^C,
    // job control and /dev/tty work. `--new-session` guards a terminal shared with the caller
    // against TIOCSTI; this one is the tool's alone, and the seccomp filter refuses TIOCSTI anyway.
    ...(terminal ? [] : ['--new-session']),
    '--unshare-pid',
    '--unshare-ipc',
    ...(net === 'none' ? ['--unshare-net'] : []),
    '--cap-drop',
    'ALL',
  ]
}

/**
 * One mount operation, with the path it covers and whether the host's content shows there. A
 * `grant` (the tool's directory, its executable, fs.read, fs.write) is bound from a descriptor
 * the runtime opened and checked at spawn (`--ro-bind-fd`/`--bind-fd`), never by path: what is
 * bound is what was qualified at load, whatever the path leads to by then.
 */
export interface Mount {
  readonly path: string
  /** True for binds of host paths; false for tmpfs, proc and dev, which replace what was there. */
  readonly host: boolean
  /** The arguments, for a mount by path. */
  readonly args: readonly string[]
  /** Set for a grant: bound from a descriptor, read-only or writable. */
  readonly grant?: 'ro' | 'rw'
  /**
   * Set for a mount from a descriptor that is not a grant: a protected path bound read-only over
   * itself from a descriptor pinned when the launch was made (`--ro-bind-fd`), or an empty file
   * bound over a protected path that is missing (`--ro-bind-data`).
   */
  readonly from?: { readonly flag: '--ro-bind-fd' | '--ro-bind-data'; readonly fd: ExtraFd }
}

const bind = (flag: '--ro-bind' | '--bind' | '--ro-bind-try', path: string): Mount => ({
  path,
  args: [flag, path, path],
  host: true,
})
const grant = (mode: 'ro' | 'rw', path: string): Mount => ({ path, args: [], host: true, grant: mode })
const tmpfs = (path: string): Mount => ({ path, args: ['--perms', '1777', '--tmpfs', path], host: false })

/**
 * Kernel interfaces under /proc that write to the host, whatever the namespace: kept read-only
 * inside (sysctls check only the file mode for uid 0, so dropped capabilities alone would not stop
 * a tool running as root from setting `kernel/core_pattern`, a program run as root on the host).
 * The `-try` ones are absent on some kernels.
 */
const PROC_READ_ONLY: readonly Mount[] = [
  bind('--ro-bind', '/proc/sys'),
  bind('--ro-bind-try', '/proc/sysrq-trigger'),
  bind('--ro-bind-try', '/proc/irq'),
  bind('--ro-bind-try', '/proc/bus'),
]

/**
 * What any dynamically linked program needs to start (/usr, the host's /bin etc., /etc, /proc,
 * /dev), and /tmp as `tmp` says. /dev/shm is private always: POSIX shared memory is IPC, and the
 * IPC namespace is unshared too. `tmp: shared` binds the host's /tmp only, not /var/tmp; `none`
 * (no /tmp wanted) is a private one here, which nothing outlives.
 */
export function baseMounts(layout: readonly HostEntry[], tmp: SandboxPolicy['tmp']): Mount[] {
  return [
    bind('--ro-bind', '/usr'),
    ...layout.map(
      (entry): Mount =>
        entry.kind === 'symlink'
          ? { path: entry.path, args: ['--symlink', entry.target, entry.path], host: true }
          : bind('--ro-bind', entry.path),
    ),
    bind('--ro-bind', '/etc'),
    { path: '/proc', args: ['--proc', '/proc'], host: false },
    ...PROC_READ_ONLY,
    { path: '/dev', args: ['--dev', '/dev'], host: false },
    tmpfs('/dev/shm'),
    ...(tmp === 'shared' ? [bind('--bind', '/tmp')] : [tmpfs('/tmp'), tmpfs('/var/tmp')]),
  ]
}

const depth = (path: string) => (path === '/' ? 0 : path.split('/').length - 1)

/** True when `path` is `root` or below it. */
export function isWithin(path: string, root: string): boolean {
  return path === root || root === '/' || path.startsWith(`${root}/`)
}

/**
 * The tool's directory (and its executable when that lies outside every grant), fs.read
 * read-only, fs.write read-write. A read grant inside a write grant is dropped: grants add up, as
 * under Landlock, so that path stays writable. A grant that brings the host's /sys along (a grant
 * of /) gets /sys read-only over it.
 */
export function grantMounts(policy: SandboxPolicy): Mount[] {
  const writes = [...new Set(policy.write)]
  const reads = [policy.toolDir, ...policy.read]
  if (![...reads, ...writes].some((root) => isWithin(policy.executable, root))) reads.push(policy.executable)
  const grants = [
    ...[...new Set(reads)]
      .filter((path) => !writes.some((root) => isWithin(path, root)))
      .map((path) => grant('ro', path)),
    ...writes.map((path) => grant('rw', path)),
  ]
  const bringsSys = grants.some((mount) => isWithin('/sys', mount.path) && mount.path !== '/sys')
  return bringsSys ? [...grants, bind('--ro-bind', '/sys')] : grants
}

/**
 * Every mount, parents before children (a stable sort by depth; at equal depth the base mount
 * first). Later mounts shadow earlier ones, so this order keeps a grant below /tmp visible over
 * the tmpfs, and a private /var/tmp or /dev private under a grant of /var or /. A usr-merge link
 * that a grant of / already brings is left out: bwrap refuses to create a symlink over it.
 */
export function mounts(
  policy: SandboxPolicy,
  layout: readonly HostEntry[],
  kindOf: (path: string) => PathKind = kindOnHost,
  protect: readonly Mount[] = [],
): Mount[] {
  const sorted = byDepth([...baseMounts(layout, policy.tmp), ...grantMounts(policy), ...protect])
  const list = sorted.filter(
    (mount, i) =>
      mount.args[0] !== '--symlink' ||
      !sorted
        .slice(0, i)
        .some((earlier) => earlier.host && earlier.path !== mount.path && isWithin(mount.path, earlier.path)),
  )
  // toolvisor's own paths the list would show go last at their depth (decision 0095).
  const own = ownMounts(policy.own ?? [], list, kindOf)
  return own.length === 0 ? list : byDepth([...list, ...own])
}

/** Parents before children; at equal depth, the order given (a stable sort). */
function byDepth(list: readonly Mount[]): Mount[] {
  // Each depth counted once, not at every comparison (this runs on every start).
  return list
    .map((mount) => ({ mount, depth: depth(mount.path) }))
    .sort((a, b) => a.depth - b.depth)
    .map(({ mount }) => mount)
}

/**
 * The argument list of a mount sequence. `fdOf` numbers the descriptor of each mount made from one
 * (a grant, or `from`; the caller adds the descriptors to the launch in the order it is asked).
 */
export function mountArgs(list: readonly Mount[], fdOf: (mount: Mount) => number = noGrants): string[] {
  return list.flatMap((mount) => {
    if (mount.from !== undefined) return [mount.from.flag, String(fdOf(mount)), mount.path]
    if (mount.grant === undefined) return mount.args
    return [mount.grant === 'ro' ? '--ro-bind-fd' : '--bind-fd', String(fdOf(mount)), mount.path]
  })
}

function noGrants(mount: Mount): never {
  throw new Error(`${mount.path} is bound from a descriptor: mountArgs needs its number`)
}

/** Whether `path` shows the host's content inside: the last mount covering it is a host bind. */
export function showsHost(path: string, list: readonly Mount[]): boolean {
  const covering = list.filter((mount) => isWithin(path, mount.path))
  return covering.at(-1)?.host ?? false
}
