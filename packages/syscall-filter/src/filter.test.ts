import { describe, expect, it } from 'vitest'
import { SeccompError } from './errors.js'
import { SYSCALL_FAMILIES } from './families.js'
import { ERRNO, type FilterOptions, SECCOMP_RET, syscallFilter, syscallInstructions } from './filter.js'
import { interpret } from './internal/interpret.js'
import { type Arch, AUDIT_ARCH, SYSCALL_NUMBERS, X32_SYSCALL_BIT } from './numbers.js'

const ALLOW = SECCOMP_RET.ALLOW
const EPERM = SECCOMP_RET.ERRNO | ERRNO.EPERM
const ENOSYS = SECCOMP_RET.ERRNO | ERRNO.ENOSYS
const ARCHES = Object.keys(AUDIT_ARCH) as Arch[]
const VARIANTS: FilterOptions[] = [
  { net: 'none', ipc: 'namespaced' },
  { net: 'host', ipc: 'namespaced' },
  { net: 'none', ipc: 'host' },
  { net: 'host', ipc: 'host' },
  { net: 'stream', ipc: 'namespaced' },
  { net: 'stream', ipc: 'host' },
]

/** The table read the simple way: the name of each number, the rule of each name. */
const names = Object.fromEntries(
  ARCHES.map((arch) => [arch, new Map([...SYSCALL_NUMBERS[arch]].map(([name, nr]) => [nr, name]))]),
) as Record<Arch, Map<number, string>>
const rules = new Map(SYSCALL_FAMILIES.flatMap((f) => f.calls.map((call) => [call, f.rule])))
const low = (value: bigint | undefined) => Number(BigInt.asUintN(32, value ?? 0n))

/** What the socket families allow, written out from the rule text rather than from the program. */
function socketAnswer(args: readonly bigint[], { net }: FilterOptions): number {
  const domain = low(args[0])
  if (net === 'none' || domain === 1) return EPERM
  if (net === 'stream') {
    const tcp = (low(args[1]) & 0xf) === 1 && [0, 6].includes(low(args[2]))
    return (domain === 2 || domain === 10) && tcp ? ALLOW : EPERM
  }
  if (domain === 2 || domain === 10) return ALLOW
  return domain === 16 && low(args[2]) === 0 ? ALLOW : EPERM
}

/** The answer the table gives for a call, computed without the search tree. */
function expected(arch: Arch, nr: number, args: readonly bigint[], options: FilterOptions): number {
  const name = names[arch].get(nr)
  const rule = name === undefined ? undefined : rules.get(name)
  switch (rule) {
    case undefined:
    case 'enosys':
      return ENOSYS
    case 'allow':
      return ALLOW
    case 'eperm':
      return EPERM
    case 'ipc':
      return options.ipc === 'namespaced' ? ALLOW : EPERM
    case 'socket':
      return socketAnswer(args, options)
    case 'socketpair':
      if (low(args[0]) !== 1) return options.net === 'host' ? socketAnswer(args, options) : EPERM
      return [1, 5].includes(low(args[1]) & 0xf) ? ALLOW : EPERM
    case 'clone':
      return low(args[0]) & 0x7e020000 ? EPERM : ALLOW
    case 'unshare':
      return low(args[0]) & 0x7e020080 ? EPERM : ALLOW
    case 'ioctl':
      return [0x5412, 0x541c].includes(low(args[1])) ? EPERM : ALLOW
    case 'personality':
      return [0, 8, 0x20000, 0x20008, 0xffffffff].includes(low(args[0])) ? ALLOW : EPERM
  }
}

/** A deterministic generator (xorshift32), so a failure names a case that can be run again. */
function random(seed: number): () => number {
  let x = seed >>> 0 || 1
  return () => {
    x ^= x << 13
    x >>>= 0
    x ^= x >>> 17
    x ^= x << 5
    x >>>= 0
    return x
  }
}

/** Arguments that hit every branch: the values the rules name, neighbours, flags above them, high halves. */
const INTERESTING = [
  0, 1, 2, 3, 5, 6, 10, 12, 16, 17, 40, 132, 262, 0x5412, 0x541c, 0x8, 0x20000, 0x20008, 0xffffffff,
]
function argsFor(next: () => number): bigint[] {
  return Array.from({ length: 6 }, () => {
    const pick = next() % 4
    const base = pick === 0 ? next() : INTERESTING[next() % INTERESTING.length]!
    const flags = pick === 1 ? (1 << (next() % 32)) >>> 0 : 0
    const high = pick === 2 ? BigInt(next()) << 32n : 0n
    return high | BigInt((base | flags) >>> 0)
  })
}

describe('the program answers exactly what the table says', () => {
  for (const options of VARIANTS) {
    const program = syscallInstructions(options)
    for (const arch of ARCHES) {
      it(`${arch}, ${JSON.stringify(options)}: every number 0..1000, x32 and random ones, random arguments`, () => {
        const next = random(0x5eccc0 + arch.length)
        const numbers = [
          ...Array.from({ length: 1001 }, (_, nr) => nr),
          ...Array.from({ length: 64 }, () => next()),
          X32_SYSCALL_BIT,
          X32_SYSCALL_BIT | 41,
          X32_SYSCALL_BIT | 53,
          0xffffffff,
        ]
        for (const nr of numbers) {
          for (let round = 0; round < 8; round++) {
            const args = argsFor(next)
            const got = interpret(program, { nr, arch: AUDIT_ARCH[arch], args }).ret
            if (got !== expected(arch, nr, args, options)) {
              expect({ arch, nr, name: names[arch].get(nr), args: args.map(String), got }).toEqual({
                expected: expected(arch, nr, args, options),
              })
            }
          }
        }
      })
    }
  }

  it('the argument rules, over a grid of the values they name, flags above them and high halves', () => {
    const grid = (values: readonly number[]) => [
      ...values.flatMap((v) => [
        BigInt(v),
        BigInt((v | 0x800) >>> 0),
        BigInt((v | 0x80000) >>> 0),
        (7n << 32n) | BigInt(v),
      ]),
      0x7e020000n,
      0x10000011n,
      0x40000000n,
      0x80n,
    ]
    const first = grid(INTERESTING)
    const second = grid([0, 1, 2, 3, 5, 6, 0x5412, 0x541c, 0x5413])
    // protocols: 0, netlink's, IPPROTO_TCP, UDP, SCTP and MPTCP, a high half over 0 and over TCP
    const third = [0n, 12n, 1n, 16n, 6n, 17n, 132n, 262n, (1n << 32n) | 0n, (1n << 32n) | 6n]
    for (const options of VARIANTS) {
      const program = syscallInstructions(options)
      for (const arch of ARCHES) {
        for (const name of ['socket', 'socketpair', 'clone', 'unshare', 'ioctl', 'personality']) {
          const nr = SYSCALL_NUMBERS[arch].get(name)!
          for (const a0 of first)
            for (const a1 of second)
              for (const a2 of third) {
                const args = [a0, a1, a2]
                const got = interpret(program, { nr, arch: AUDIT_ARCH[arch], args }).ret
                const want = expected(arch, nr, args, options)
                if (got !== want) expect({ arch, name, args: args.map(String), got }).toEqual({ want })
              }
        }
      }
    }
  })

  it('net stream: TCP sockets only (any flags, protocol 0 or IPPROTO_TCP); UDP, raw, SCTP, MPTCP, unix and netlink EPERM', () => {
    const program = syscallInstructions({ net: 'stream', ipc: 'host' })
    const SOCK_NONBLOCK = 0x800
    const SOCK_CLOEXEC = 0x80000
    const cases: Array<[string, string, number[], number]> = [
      ['socket', 'tcp', [2, 1, 0], ALLOW],
      ['socket', 'tcp6 nonblock cloexec', [10, 1 | SOCK_NONBLOCK | SOCK_CLOEXEC, 0], ALLOW],
      ['socket', 'tcp, IPPROTO_TCP', [2, 1, 6], ALLOW],
      ['socket', 'udp', [2, 2, 0], EPERM],
      ['socket', 'udp6 nonblock', [10, 2 | SOCK_NONBLOCK, 17], EPERM],
      ['socket', 'raw', [2, 3, 6], EPERM],
      ['socket', 'sctp stream', [2, 1, 132], EPERM],
      ['socket', 'mptcp stream', [10, 1, 262], EPERM],
      ['socket', 'unix stream', [1, 1, 0], EPERM],
      ['socket', 'netlink route', [16, 3, 0], EPERM],
      ['socket', 'packet', [17, 3, 0], EPERM],
      ['socketpair', 'unix stream', [1, 1 | SOCK_CLOEXEC, 0], ALLOW],
      ['socketpair', 'unix seqpacket', [1, 5, 0], ALLOW],
      ['socketpair', 'unix dgram', [1, 2, 0], EPERM],
      ['socketpair', 'inet stream', [2, 1, 0], EPERM],
    ]
    for (const arch of ARCHES) {
      for (const [call, what, args, want] of cases) {
        const nr = SYSCALL_NUMBERS[arch].get(call)!
        const got = interpret(program, { nr, arch: AUDIT_ARCH[arch], args: args.map(BigInt) }).ret
        expect({ arch, call, what, got }).toEqual({ arch, call, what, got: want })
      }
    }
  })

  it('x32 calls are ENOSYS whatever their number (socket, socketpair, their x32-only numbers)', () => {
    const program = syscallInstructions({ net: 'host', ipc: 'namespaced' })
    for (const nr of [41, 53, 56, 512, 547]) {
      const run = interpret(program, { nr: X32_SYSCALL_BIT | nr, arch: AUDIT_ARCH.x86_64, args: [2n] })
      expect(run.ret).toBe(ENOSYS)
    }
  })

  it('kills a process of any other architecture (i386 int 0x80, arm32, big-endian aarch64)', () => {
    const program = syscallInstructions({ net: 'host', ipc: 'host' })
    for (const arch of [0x40000003, 0x40000028, 0x800000b7, 0xc00000f3, 0]) {
      expect(interpret(program, { nr: 102, arch, args: [1n] }).ret).toBe(SECCOMP_RET.KILL_PROCESS)
    }
  })
})

describe('what the program costs', () => {
  const program = syscallInstructions({ net: 'host', ipc: 'host' })

  it('a call the table simply allows reads only arch and nr (the kernel caches its verdict and skips the program)', () => {
    for (const arch of ARCHES) {
      for (const [name, nr] of SYSCALL_NUMBERS[arch]) {
        if (rules.get(name) !== 'allow') continue
        const run = interpret(program, { nr, arch: AUDIT_ARCH[arch], args: [1n, 1n, 1n] })
        expect({ name, ...run }).toMatchObject({ name, ret: ALLOW, readArgs: false })
      }
    }
  })

  it('a binary search, not a chain: at most 16 instructions to any verdict without an argument', () => {
    let longest = 0
    for (const arch of ARCHES) {
      for (let nr = 0; nr <= 1000; nr++) {
        const run = interpret(program, { nr, arch: AUDIT_ARCH[arch] })
        if (!run.readArgs) longest = Math.max(longest, run.steps)
      }
    }
    expect(longest).toBeLessThanOrEqual(16)
    expect(program.length).toBeLessThan(600)
  })
})

describe('syscallFilter', () => {
  it('encodes struct sock_filter (u16 code, u8 jt, u8 jf, u32 k, little-endian), a fresh copy each call', () => {
    const options: FilterOptions = { net: 'none', ipc: 'namespaced' }
    const instructions = syscallInstructions(options)
    const bytes = syscallFilter(options)
    expect(bytes.length).toBe(instructions.length * 8)
    const view = new DataView(bytes.buffer)
    instructions.forEach((insn, i) => {
      expect([
        view.getUint16(i * 8, true),
        bytes[i * 8 + 2],
        bytes[i * 8 + 3],
        view.getUint32(i * 8 + 4, true),
      ]).toEqual([insn.code, insn.jt, insn.jf, insn.k])
    })
    bytes[0] = 0xff
    expect(syscallFilter(options)[0]).toBe(0x20)
  })

  it('SECCOMP_ERR_OPTIONS: an option outside its set names the field and the values it takes', () => {
    const bad = { net: 'bridge', ipc: 'host' } as unknown as FilterOptions
    const error = (() => {
      try {
        syscallFilter(bad)
      } catch (caught) {
        return caught
      }
      return undefined
    })()
    expect(SeccompError.is(error) && error.code).toBe('SECCOMP_ERR_OPTIONS')
    expect((error as Error).message).toBe(
      'syscallFilter: options.net is "bridge"; pass one of "host", "none", "stream"',
    )
    expect(() => syscallFilter({ net: 'none', ipc: 'shared' } as unknown as FilterOptions)).toThrow(
      'syscallFilter: options.ipc is "shared"; pass one of "namespaced", "host"',
    )
  })
})
