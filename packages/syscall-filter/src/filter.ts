import { SeccompError } from './errors.js'
import { type ArgumentRule, type Rule, SYSCALL_FAMILIES } from './families.js'
import { ALLOW, argumentChecks, checkOf, EPERM, OFFSET_ARCH, OFFSET_NR } from './internal/arguments.js'
import { assemble, type Draft, encodeFilter, type SockFilter } from './internal/bpf.js'
import { intervals, type Leaf, searchTree } from './internal/tree.js'
import { type Arch, AUDIT_ARCH, SYSCALL_NUMBERS } from './numbers.js'

/** Which variant of the program a mechanism needs. */
export interface FilterOptions {
  /**
   * `none`: no socket of any family (a second wall behind bwrap's network namespace); `host`:
   * AF_INET and AF_INET6 of every kind (TCP, UDP, ...) and netlink route; `stream`: TCP only
   * (AF_INET or AF_INET6, SOCK_STREAM, protocol 0 or IPPROTO_TCP), for a mechanism whose TCP
   * rules confine a network allow list to a proxy's port (Landlock): no UDP (so no DNS), no raw,
   * netlink or unix socket.
   */
  readonly net: 'host' | 'none' | 'stream'
  /** `namespaced`: the mechanism gives the tool its own IPC namespace (bwrap), so SysV IPC and POSIX queues are allowed; `host`: refused (Landlock). */
  readonly ipc: 'namespaced' | 'host'
}

/** The values `seccomp_data` is answered with (linux/seccomp.h). */
export const SECCOMP_RET = {
  /** Kill the whole process (a call of another architecture). */
  KILL_PROCESS: 0x80000000,
  /** Fail the call with the errno in the low 16 bits. */
  ERRNO: 0x00050000,
  /** Let the call through. */
  ALLOW: 0x7fff0000,
} as const

/** errno values the filter answers with. */
export const ERRNO = {
  /** A call refused on purpose: the kernel has it, the tool may not. */
  EPERM: 1,
  /** A call the filter hides: the caller falls back as on a kernel without it. */
  ENOSYS: 38,
} as const

const RET_EPERM = SECCOMP_RET.ERRNO | ERRNO.EPERM
const RET_ENOSYS = SECCOMP_RET.ERRNO | ERRNO.ENOSYS

/** Each call's rule, by name (every family's calls; names are unique across families). */
const RULES: ReadonlyMap<string, Rule> = new Map(
  SYSCALL_FAMILIES.flatMap((family) => family.calls.map((call) => [call, family.rule] as const)),
)

/** What `rule` becomes for these options: a return value, or an argument check. */
function leafOf(rule: Rule, options: FilterOptions): Leaf {
  switch (rule) {
    case 'allow':
      return { ret: SECCOMP_RET.ALLOW }
    case 'eperm':
      return { ret: RET_EPERM }
    case 'enosys':
      return { ret: RET_ENOSYS }
    case 'ipc':
      return { ret: options.ipc === 'namespaced' ? SECCOMP_RET.ALLOW : RET_EPERM }
    case 'socket':
      // No family is left to look at under net: none.
      return options.net === 'none' ? { ret: RET_EPERM } : { goto: checkOf('socket') }
    default:
      return { goto: checkOf(rule) }
  }
}

/** The leaf of every number of `arch`'s table. */
function leaves(arch: Arch, options: FilterOptions): Map<number, Leaf> {
  const out = new Map<number, Leaf>()
  for (const [name, nr] of SYSCALL_NUMBERS[arch]) {
    const rule = RULES.get(name)
    if (rule !== undefined) out.set(nr, leafOf(rule, options))
  }
  return out
}

function checkOptions(options: FilterOptions): void {
  const fields = [
    ['net', options.net, ['host', 'none', 'stream']],
    ['ipc', options.ipc, ['namespaced', 'host']],
  ] as const
  for (const [field, value, allowed] of fields) {
    if (!(allowed as readonly string[]).includes(value)) {
      throw new SeccompError(
        'SECCOMP_ERR_OPTIONS',
        `syscallFilter: options.${field} is ${JSON.stringify(value)}; pass one of ${allowed.map((a) => `"${a}"`).join(', ')}`,
      )
    }
  }
}

/**
 * The filter's instructions: a process of another architecture is killed (i386 `int 0x80`, arm32
 * compat: their numbers are not these); per architecture a binary search over the syscall number
 * answers from the table; the few argument rules are checked after it. Everything up to a leaf
 * reads only `arch` and `nr`, so the kernel's per-number action cache (Linux 5.11) skips the
 * program entirely for every call the table simply allows.
 */
export function syscallInstructions(options: FilterOptions): SockFilter[] {
  checkOptions(options)
  const used = new Set<ArgumentRule>()
  const perArch = (arch: Arch): Draft[] => {
    const own = leaves(arch, options)
    for (const leaf of own.values())
      if ('goto' in leaf) used.add(leaf.goto.slice('check:'.length) as ArgumentRule)
    return [
      { op: 'label', name: arch },
      { op: 'ld', k: OFFSET_NR },
      ...searchTree(intervals(own, { ret: RET_ENOSYS }), `${arch}:`),
    ]
  }
  const x86 = perArch('x86_64')
  const arm = perArch('aarch64')
  return assemble([
    { op: 'ld', k: OFFSET_ARCH },
    { op: 'jeq', k: AUDIT_ARCH.x86_64, jt: 'x86_64', jf: 'arch:other' },
    { op: 'label', name: 'arch:other' },
    { op: 'jeq', k: AUDIT_ARCH.aarch64, jt: 'aarch64', jf: 'kill' },
    { op: 'label', name: 'kill' },
    { op: 'ret', k: SECCOMP_RET.KILL_PROCESS },
    ...x86,
    ...arm,
    ...argumentChecks(used, options),
    { op: 'label', name: EPERM },
    { op: 'ret', k: RET_EPERM },
    { op: 'label', name: ALLOW },
    { op: 'ret', k: SECCOMP_RET.ALLOW },
  ])
}

/**
 * The encoded program (`struct sock_filter[]`, 8 bytes per instruction) for `bwrap --seccomp FD`
 * or the Landlock launcher's `--seccomp-fd FD`. Built on each call (a few milliseconds); a
 * mechanism keeps the variants it uses.
 *
 * @example
 * ```ts
 * const program = syscallFilter({ net: 'none', ipc: 'namespaced' })
 * extraFds.push({ kind: 'data', data: program }) // bwrap --seccomp 3+index
 * ```
 */
export function syscallFilter(options: FilterOptions): Uint8Array {
  return encodeFilter(syscallInstructions(options))
}
