import type { ArgumentRule } from '../families.js'
import type { Draft } from './bpf.js'

// struct seccomp_data { int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]; }. Both
// architectures are little-endian: an argument's low 32 bits come first. Every argument checked
// here is an int to the kernel (or, for clone, cut to its low 32 bits by the kernel itself), so
// the high half of the register is not looked at: it cannot change what the kernel does.
export const OFFSET_NR = 0
export const OFFSET_ARCH = 4
const arg = (index: number) => 16 + 8 * index

const AF_UNIX = 1
const AF_INET = 2
const AF_INET6 = 10
const AF_NETLINK = 16
const NETLINK_ROUTE = 0
const IPPROTO_TCP = 6
const SOCK_STREAM = 1
const SOCK_SEQPACKET = 5
const SOCK_TYPE_MASK = 0xf

/** CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET (0x80 is CSIGNAL to clone). */
export const CLONE_NAMESPACES =
  0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
/** unshare() also takes CLONE_NEWTIME. */
export const UNSHARE_NAMESPACES = CLONE_NAMESPACES | 0x00000080

const TIOCSTI = 0x5412
const TIOCLINUX = 0x541c
/** PER_LINUX, UNAME26, ADDR_NO_RANDOMIZE, both, and the query value (Docker's list). */
export const PERSONALITIES = [0x0, 0x0008, 0x20000, 0x20008, 0xffffffff] as const

/** The labels every block returns through. */
export const ALLOW = 'allow'
export const EPERM = 'eperm'

/** What the argument checks depend on. */
export interface Network {
  readonly net: 'host' | 'none' | 'stream'
}

/** The label of the check for `rule`. */
export const checkOf = (rule: ArgumentRule) => `check:${rule}`

/** `value == a ? allow : value == b ? allow : ... : otherwise`, after a load already done. */
function oneOf(values: readonly number[], name: string, then: string, otherwise: string): Draft[] {
  return values.flatMap((k, i) => {
    const next = i + 1 < values.length ? `${name}:${i + 1}` : otherwise
    return [
      ...(i === 0 ? [] : [{ op: 'label', name: `${name}:${i}` } as const]),
      { op: 'jeq', k, jt: then, jf: next } as const,
    ]
  })
}

/** socket(domain, type, protocol) under net: host (under net: none the call is EPERM outright). */
function hostSocketCheck(): Draft[] {
  return [
    { op: 'label', name: checkOf('socket') },
    { op: 'ld', k: arg(0) },
    { op: 'jeq', k: AF_UNIX, jt: EPERM, jf: 'socket:inet' },
    { op: 'label', name: 'socket:inet' },
    ...oneOf([AF_INET, AF_INET6], 'socket:ip', ALLOW, 'socket:netlink'),
    { op: 'label', name: 'socket:netlink' },
    { op: 'jeq', k: AF_NETLINK, jt: 'socket:protocol', jf: EPERM },
    { op: 'label', name: 'socket:protocol' },
    { op: 'ld', k: arg(2) },
    { op: 'jeq', k: NETLINK_ROUTE, jt: ALLOW, jf: EPERM },
  ]
}

/**
 * socket(domain, type, protocol) under net: stream: TCP only, the one protocol Landlock's port
 * rules cover. The type's low four bits are the kind (SOCK_NONBLOCK and SOCK_CLOEXEC sit above
 * them); the protocol is checked too, since a stream socket of another protocol (SCTP, MPTCP)
 * connects past the TCP rules.
 */
function streamSocketCheck(): Draft[] {
  return [
    { op: 'label', name: checkOf('socket') },
    { op: 'ld', k: arg(0) },
    ...oneOf([AF_INET, AF_INET6], 'socket:ip', 'socket:type', EPERM),
    { op: 'label', name: 'socket:type' },
    { op: 'ld', k: arg(1) },
    { op: 'and', k: SOCK_TYPE_MASK },
    { op: 'jeq', k: SOCK_STREAM, jt: 'socket:protocol', jf: EPERM },
    { op: 'label', name: 'socket:protocol' },
    { op: 'ld', k: arg(2) },
    ...oneOf([0, IPPROTO_TCP], 'socket:tcp', ALLOW, EPERM),
  ]
}

function socketCheck({ net }: Network): Draft[] {
  return net === 'stream' ? streamSocketCheck() : hostSocketCheck()
}

/**
 * socketpair(domain, type, ...): connected unix pairs of the stream kinds; other families as
 * socket() under net: host, EPERM under none and stream (no other family makes pairs anyway).
 */
function socketpairCheck({ net }: Network): Draft[] {
  return [
    { op: 'label', name: checkOf('socketpair') },
    { op: 'ld', k: arg(0) },
    { op: 'jeq', k: AF_UNIX, jt: 'socketpair:type', jf: net === 'host' ? checkOf('socket') : EPERM },
    { op: 'label', name: 'socketpair:type' },
    { op: 'ld', k: arg(1) },
    { op: 'and', k: SOCK_TYPE_MASK },
    ...oneOf([SOCK_STREAM, SOCK_SEQPACKET], 'socketpair:kind', ALLOW, EPERM),
  ]
}

function flagsCheck(rule: 'clone' | 'unshare', mask: number): Draft[] {
  return [
    { op: 'label', name: checkOf(rule) },
    { op: 'ld', k: arg(0) },
    { op: 'jset', k: mask, jt: EPERM, jf: ALLOW },
  ]
}

const CHECKS: Readonly<Record<ArgumentRule, (network: Network) => Draft[]>> = {
  socket: socketCheck,
  socketpair: socketpairCheck,
  clone: () => flagsCheck('clone', CLONE_NAMESPACES),
  unshare: () => flagsCheck('unshare', UNSHARE_NAMESPACES),
  ioctl: () => [
    { op: 'label', name: checkOf('ioctl') },
    { op: 'ld', k: arg(1) },
    ...oneOf([TIOCSTI, TIOCLINUX], 'ioctl:request', EPERM, ALLOW),
  ],
  personality: () => [
    { op: 'label', name: checkOf('personality') },
    { op: 'ld', k: arg(0) },
    ...oneOf(PERSONALITIES, 'personality:value', ALLOW, EPERM),
  ],
}

/** Jumps go forward only: socketpair's check, which may continue into socket's, comes first. */
const ORDER: readonly ArgumentRule[] = ['clone', 'unshare', 'ioctl', 'personality', 'socketpair', 'socket']

/** The checks for `rules`, and the ones they lead to (socketpair to socket under net: host). */
export function argumentChecks(rules: ReadonlySet<ArgumentRule>, network: Network): Draft[] {
  const wanted = new Set(rules)
  if (wanted.has('socketpair') && network.net === 'host') wanted.add('socket')
  return ORDER.filter((rule) => wanted.has(rule)).flatMap((rule) => CHECKS[rule](network))
}
