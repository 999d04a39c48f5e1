import type { MechanismDescription, SandboxField } from '@toolvisor/launchers'
import type { LauncherStatus, PidNamespace } from './launcher.js'
import { type ExecMinimum, type KernelFeatures, tcpRulesAbi } from './policy.js'

/** How each field is enforced at this ABI. */
export function enforcement(abi: number): Partial<Record<SandboxField, string>> {
  const tcp = abi >= tcpRulesAbi ? ', and Landlock denies TCP bind and connect as a second wall' : ''
  const allowList =
    abi >= tcpRulesAbi
      ? "an allow list: the syscall filter allows socket() only for TCP (AF_INET and AF_INET6, SOCK_STREAM, protocol 0 or IPPROTO_TCP: no UDP, so no DNS, and no raw, netlink or unix socket), and Landlock's TCP rules allow connect only to the port number of toolvisor's proxy (which listens on the host's 127.0.0.1) and bind only to the published ports (EACCES on any other); "
      : `an allow list: refused (it needs Landlock's TCP port rules, ABI >= ${tcpRulesAbi}); `
  return {
    'fs.read': `Landlock rule: execute, read file, read directory (ABI ${abi}); anything else is EACCES`,
    'fs.write': `Landlock rule with every filesystem right ABI ${abi} handles; a write grant of / (above /proc and /sys) is refused`,
    net:
      `net: none: the syscall filter refuses socket() of every family and datagram socketpair()${tcp}; ` +
      allowList +
      'net: host: TCP and UDP as the host has them, socket() only for AF_INET, AF_INET6 and netlink route; ' +
      'always: the syscall allowlist of @toolvisor/syscall-filter (a call not on it ENOSYS; no AF_UNIX socket ' +
      'and no datagram socketpair; unshare and clone with a namespace flag, setns, mounts, keyrings, SysV IPC ' +
      'and POSIX queues, bpf, perf_event_open, userfaultfd and ptrace EPERM; clone3 and io_uring ENOSYS; a ' +
      'process of another ABI, i386 or arm32, killed)',
    tmp: 'tmp: shared: /tmp granted read-write; tmp: private: refused (Landlock has no mount namespace)',
    run_as:
      'the launcher switches user itself (initgroups, setgid, setuid; supplementary groups kept) ' +
      'before restricting, and checks setuid(0) fails; needs root. As root, a tool that declares no ' +
      'run_as runs as the sandbox user',
  }
}

/**
 * What follows a run here: its pid namespace, or the subreaper where none can be made. Stated
 * either way (among the gaps: what `check --probe` shows), since it decides what /proc shows.
 */
export function lifetime(pidNamespace: PidNamespace): string {
  if (pidNamespace.available) {
    return "pid namespace: strays die with the tool; /proc shows only the tool's processes"
  }
  return (
    `no pid namespace here (${pidNamespace.why}): a child subreaper kills what the tool left when it ends; ` +
    '/proc shows every process of the host'
  )
}

/** The gaps of this kernel and of the exec minimum, stated so `check --probe` can show them. */
export function gaps(kernel: KernelFeatures, minimum: ExecMinimum): string[] {
  const { abi, pidNamespace } = kernel
  const list = [
    lifetime(pidNamespace),
    'Landlock denies, it does not hide: stat of an ungranted path works (existence, size, owner and times leak)',
    'chmod, chown, utime, setxattr, flock, fcntl and access are not restricted by Landlock: they are the ' +
      "tool user's own rights (the sandbox user when toolvisor is root; a run_as root tool could change " +
      'root-owned files outside its grants)',
    `exec minimum granted to every tool: ${minimum.read.join(', ')} read-only, ${minimum.write.join(', ')} ` +
      'writable; /etc holds whatever the tool user may read there',
    '/proc is not granted: a tool that reads it (ps, os.cpus(), /proc/self) must declare it in fs.read, ' +
      (pidNamespace.available
        ? "which shows the run's own processes only"
        : "which also shows every process's command line"),
    'no unix socket at all (the syscall filter refuses socket(AF_UNIX) and datagram socketpair() for every ' +
      'tool): a tool that talks to a local daemon by socket cannot, under Landlock or bwrap',
    'syscalls: only the allowlist (a call not on it is ENOSYS, callers fall back); no namespace (so no nested ' +
      'sandbox), no SysV IPC or POSIX message queue, no ptrace, bpf or perf: a ' +
      'container runtime, a debugger or a profiler cannot run under Landlock',
    pidNamespace.available
      ? 'protected paths in a writable grant (.git/hooks, .git/config, shell rc files, .envrc, editor and agent ' +
        "folders) are kept read-only in the launcher's mount namespace, a missing one masked by a placeholder"
      : 'protected paths in a writable grant (.git/hooks, .git/config, shell rc files, .envrc, editor and agent ' +
        'folders) are NOT kept here: they need the mount namespace the launcher cannot make (use bwrap, which ' +
        'keeps them)',
    "toolvisor's own paths: a read rule above one is narrowed to the entries around it; a writable rule above " +
      'one that the tool user could reach is refused (decision 0095)' +
      (pidNamespace.available ? ", but the installation's is kept read-only in the mount namespace" : ''),
  ]
  if (abi < 2)
    list.push('rename and link across directories fail with EXDEV even inside write grants (ABI < 2)')
  if (abi < 3) list.push('truncation of files under read grants is not denied (ABI < 3)')
  if (abi < tcpRulesAbi) {
    list.push('net: none rests on the seccomp filter alone: no TCP rules below ABI 4')
    list.push('net (an allow list): refused, it needs TCP port rules (ABI < 4)')
  } else {
    list.push(
      "net (an allow list): TCP connect is allowed to the proxy's port number on any address (Landlock " +
        'rules are per port, not per address): a host elsewhere listening on that port number is reachable; ' +
        'UDP, DNS and every other socket are refused by the filter',
      "net (an allow list): no network namespace, so the tool's servers are on the host's network: a " +
        'published port bound on 0.0.0.0 rather than 127.0.0.1 is reachable from other hosts, and listen() ' +
        'without bind() takes an ephemeral port on every address, which Landlock does not check',
    )
  }
  if (abi < 5) list.push('ioctl on device files is not restricted (ABI < 5)')
  if (abi < 6) {
    list.push('signals to processes outside the sandbox and abstract unix sockets are not scoped (ABI < 6)')
  }
  return list
}

/** The mechanism's description from what `--abi` found. */
export function describeStatus(
  name: string,
  status: LauncherStatus,
  minimum: ExecMinimum,
): MechanismDescription {
  if (!status.available) {
    return {
      name,
      available: false,
      unavailable: { reason: status.reason, fix: status.fix },
      enforces: {},
      gaps: [],
    }
  }
  return { name, available: true, enforces: enforcement(status.abi), gaps: gaps(status, minimum) }
}
