/**
 * The filter every tool runs under, as a raw classic-BPF program for `bwrap --seccomp FD`.
 *
 * Written by hand (no libseccomp):
 * - `socket(AF_UNIX, ...)` -> EPERM always: a unix socket connects by path or by abstract name,
 *   and neither the mount namespace (a socket inside a granted directory, or in a shared /tmp)
 *   nor `net: host` (the host's abstract sockets) keeps that inside the grants. `socketpair`
 *   stays: it makes an anonymous pair that can reach nothing.
 * - with `net: none`, `socket()` of every other family -> EPERM too (the network namespace is the
 *   first wall, this the second);
 * - `add_key`, `request_key`, `keyctl` -> EPERM: the kernel keyrings are not namespaced by bwrap;
 * - `io_uring_setup` -> ENOSYS (io_uring opens and connects sockets without `socket(2)`), x32
 *   system calls -> ENOSYS, any architecture other than x86_64 and aarch64 (i386 `int 0x80`,
 *   arm32 compat) -> the process is killed, because their syscall numbers (socketcall!) are not
 *   the ones checked here.
 */

// struct seccomp_data { int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]; }
const OFFSET_NR = 0
const OFFSET_ARCH = 4
const OFFSET_ARG0 = 16 // low 32 bits (little-endian): the kernel reads `int domain`

const BPF_LD_W_ABS = 0x00 | 0x00 | 0x20
const BPF_JMP_JEQ_K = 0x05 | 0x10 | 0x00
const BPF_JMP_JGE_K = 0x05 | 0x30 | 0x00
const BPF_RET_K = 0x06 | 0x00

const SECCOMP_RET_KILL_PROCESS = 0x80000000
const SECCOMP_RET_ERRNO = 0x00050000
const SECCOMP_RET_ALLOW = 0x7fff0000

const EPERM = 1
const ENOSYS = 38
const AF_UNIX = 1

/**
 * `AUDIT_ARCH_*` values and the syscall numbers the filter checks, per architecture (from the
 * kernel's `arch/x86/entry/syscalls/syscall_64.tbl` and `include/uapi/asm-generic/unistd.h`).
 */
export const ARCHES = {
  x86_64: {
    audit: 0xc000003e,
    socket: 41,
    ioUringSetup: 425,
    x32Bit: 0x40000000,
    keyring: [248, 249, 250], // add_key, request_key, keyctl
  },
  aarch64: { audit: 0xc00000b7, socket: 198, ioUringSetup: 425, x32Bit: undefined, keyring: [217, 218, 219] },
} as const

/** One `struct sock_filter`. */
export interface SockFilter {
  readonly code: number
  readonly jt: number
  readonly jf: number
  readonly k: number
}

type Target = string | number // a label, or 0 for "next instruction"
type Draft = { code: number; k: number; jt?: Target; jf?: Target; label?: string }

/** Resolves labels into the forward-only relative jumps classic BPF has. */
function assemble(drafts: readonly Draft[]): SockFilter[] {
  const at = new Map<string, number>()
  drafts.forEach((d, i) => {
    if (d.label !== undefined) at.set(d.label, i)
  })
  const offset = (from: number, to: Target | undefined): number => {
    if (to === undefined || to === 0) return 0
    const index = typeof to === 'number' ? from + 1 + to : at.get(to)
    if (index === undefined) throw new Error(`seccomp assembler: unknown label ${String(to)}`)
    const delta = index - from - 1
    if (delta < 0 || delta > 255) throw new Error(`seccomp assembler: jump to ${String(to)} out of range`)
    return delta
  }
  return drafts.map((d, i) => ({ code: d.code, k: d.k >>> 0, jt: offset(i, d.jt), jf: offset(i, d.jf) }))
}

const load = (offset: number, label?: string): Draft => ({
  code: BPF_LD_W_ABS,
  k: offset,
  ...(label === undefined ? {} : { label }),
})
const jeq = (k: number, jt: Target, jf: Target = 0): Draft => ({ code: BPF_JMP_JEQ_K, k, jt, jf })
const jge = (k: number, jt: Target, jf: Target = 0): Draft => ({ code: BPF_JMP_JGE_K, k, jt, jf })
const ret = (k: number, label?: string): Draft => ({
  code: BPF_RET_K,
  k,
  ...(label === undefined ? {} : { label }),
})

/** What the filter refuses beyond the fixed set: other socket families under `net: none`. */
export interface FilterOptions {
  readonly net: 'host' | 'none'
}

/** The filter's instructions (exported for the interpreter test). */
export function sandboxFilter(options: FilterOptions): SockFilter[] {
  const { x86_64, aarch64 } = ARCHES
  const perArch = (arch: typeof x86_64 | typeof aarch64, label: string): Draft[] => [
    load(OFFSET_NR, label),
    ...(arch.x32Bit === undefined ? [] : [jge(arch.x32Bit, 'enosys')]),
    jeq(arch.ioUringSetup, 'enosys'),
    ...arch.keyring.map((nr) => jeq(nr, 'eperm')),
    jeq(arch.socket, 'socket'),
    ret(SECCOMP_RET_ALLOW),
  ]
  return assemble([
    load(OFFSET_ARCH),
    jeq(x86_64.audit, 'x86_64'),
    jeq(aarch64.audit, 'aarch64', 'kill'),
    ret(SECCOMP_RET_KILL_PROCESS, 'kill'),
    ...perArch(x86_64, 'x86_64'),
    ...perArch(aarch64, 'aarch64'),
    // socket(domain): AF_UNIX never; the other families only with net: host.
    load(OFFSET_ARG0, 'socket'),
    jeq(AF_UNIX, 'eperm', options.net === 'none' ? 'eperm' : 'allow'),
    ret(SECCOMP_RET_ERRNO | EPERM, 'eperm'),
    ret(SECCOMP_RET_ERRNO | ENOSYS, 'enosys'),
    ret(SECCOMP_RET_ALLOW, 'allow'),
  ])
}

/** Serialises instructions as the kernel's `struct sock_filter[]` (u16 code, u8 jt, u8 jf, u32 k, LE). */
export function encodeFilter(filter: readonly SockFilter[]): Uint8Array {
  const bytes = new Uint8Array(filter.length * 8)
  const view = new DataView(bytes.buffer)
  filter.forEach((insn, i) => {
    view.setUint16(i * 8, insn.code, true)
    view.setUint8(i * 8 + 2, insn.jt)
    view.setUint8(i * 8 + 3, insn.jf)
    view.setUint32(i * 8 + 4, insn.k, true)
  })
  return bytes
}

const cached = new Map<FilterOptions['net'], Uint8Array>()

/** The encoded program for `options` (built once; each caller gets its own copy). */
export function sandboxProgram(options: FilterOptions): Uint8Array {
  let program = cached.get(options.net)
  if (program === undefined) {
    program = encodeFilter(sandboxFilter(options))
    cached.set(options.net, program)
  }
  return program.slice()
}
