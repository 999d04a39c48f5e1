import type { MechanismDescription, SandboxField } from '@toolvisor/process-runtime'
import type { LauncherStatus } from './launcher.js'
import { type ExecMinimum, netNoneAbi } from './policy.js'

/** How each field is enforced at this ABI. */
export function enforcement(abi: number): Partial<Record<SandboxField, string>> {
  const netNone =
    abi >= netNoneAbi
      ? 'net: none: Landlock denies TCP bind and connect and pathname unix sockets outside write grants; ' +
        'a seccomp filter refuses socket() for every family but AF_UNIX, and io_uring'
      : `net: none: refused (needs Landlock ABI >= ${netNoneAbi}; this kernel has ABI ${abi})`
  return {
    'fs.read': `Landlock rule: execute, read file, read directory (ABI ${abi}); anything else is EACCES`,
    'fs.write': `Landlock rule with every filesystem right ABI ${abi} handles`,
    net: `${netNone}; net: host: not restricted`,
    tmp: 'tmp: shared: /tmp granted read-write; tmp: private: refused (Landlock has no mount namespace)',
    run_as:
      'the launcher switches user itself (initgroups, setgid, setuid; supplementary groups kept) ' +
      'before restricting, and checks setuid(0) fails; needs root',
  }
}

/** The gaps of this kernel and of the exec minimum, stated so `check --probe` can show them. */
export function gaps(abi: number, minimum: ExecMinimum): string[] {
  const list = [
    'Landlock denies, it does not hide: stat of an ungranted path works (existence, size, owner and times leak)',
    'chmod, chown, utime, setxattr, flock, fcntl and access are not restricted by Landlock: a tool left ' +
      'running as root can still chmod or touch root-owned files outside its grants (use run_as)',
    `exec minimum granted to every tool: ${minimum.read.join(', ')} read-only, ${minimum.write.join(', ')} ` +
      'writable; /etc includes whatever the tool user may read there (as root: /etc/shadow)',
    '/proc is not granted: a tool that reads it (ps, os.cpus(), /proc/self) must declare it in fs.read, ' +
      "which also shows every process's command line",
    'file descriptors the tool inherits (stdio, extra fds) are not restricted',
    'PR_SET_PDEATHSIG reaches the tool only: its children die with the process group kill, and ' +
      'a child that calls setsid escapes both',
  ]
  if (abi < 2)
    list.push('rename and link across directories fail with EXDEV even inside write grants (ABI < 2)')
  if (abi < 3) list.push('truncation of files under read grants is not denied (ABI < 3)')
  if (abi < 5) list.push('ioctl on device files is not restricted (ABI < 5)')
  if (abi < 6) {
    list.push('signals to processes outside the sandbox and abstract unix sockets are not scoped (ABI < 6)')
  }
  if (abi < netNoneAbi) {
    list.push(
      `pathname unix sockets under any grant stay connectable (ABI < ${netNoneAbi}), so net: none is refused`,
    )
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
  return { name, available: true, enforces: enforcement(status.abi), gaps: gaps(status.abi, minimum) }
}
