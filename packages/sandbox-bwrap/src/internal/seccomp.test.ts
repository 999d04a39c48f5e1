import { describe, expect, it } from 'vitest'
import type { SockFilter } from './seccomp.js'
import { ARCHES, encodeFilter, sandboxFilter, sandboxProgram } from './seccomp.js'

/**
 * A classic-BPF interpreter for the instructions the filter uses, run over a `struct
 * seccomp_data`, so both architectures (and x32, disabled on this kernel) are checked; the real
 * kernel runs the same program under bwrap in test/net.test.ts.
 */
function run(
  filter: readonly SockFilter[],
  data: { nr: number; arch: number; args?: readonly number[] },
): number {
  const bytes = new DataView(new ArrayBuffer(64))
  bytes.setInt32(0, data.nr, true)
  bytes.setUint32(4, data.arch, true)
  ;(data.args ?? []).forEach((arg, i) => {
    bytes.setBigUint64(16 + 8 * i, BigInt.asUintN(64, BigInt(arg)), true)
  })
  let acc = 0
  for (let pc = 0; pc < filter.length; pc++) {
    const insn = filter[pc]!
    switch (insn.code) {
      case 0x20: // BPF_LD | BPF_W | BPF_ABS
        acc = bytes.getUint32(insn.k, true)
        break
      case 0x15: // BPF_JMP | BPF_JEQ | BPF_K
        pc += acc === insn.k ? insn.jt : insn.jf
        break
      case 0x35: // BPF_JMP | BPF_JGE | BPF_K
        pc += acc >= insn.k ? insn.jt : insn.jf
        break
      case 0x06: // BPF_RET | BPF_K
        return insn.k
      default:
        throw new Error(`unexpected opcode ${insn.code.toString(16)} at ${pc}`)
    }
  }
  throw new Error('fell off the end of the filter')
}

const ALLOW = 0x7fff0000
const EPERM = 0x00050000 | 1
const ENOSYS = 0x00050000 | 38
const KILL_PROCESS = 0x80000000
const AF_UNIX = 1
const AF_INET = 2
const AF_INET6 = 10
const AF_NETLINK = 16
const AF_PACKET = 17
const AF_VSOCK = 40

describe('the sandbox seccomp program', () => {
  const none = sandboxFilter({ net: 'none' })
  const host = sandboxFilter({ net: 'host' })

  for (const [name, arch] of Object.entries(ARCHES)) {
    describe(name, () => {
      it('net: none refuses socket() of every family with EPERM, AF_UNIX included', () => {
        for (const family of [AF_UNIX, AF_INET, AF_INET6, AF_NETLINK, AF_PACKET, AF_VSOCK, 0, 255]) {
          expect(run(none, { nr: arch.socket, arch: arch.audit, args: [family, 1, 0] })).toBe(EPERM)
        }
      })

      it('net: host allows every family but AF_UNIX, which is refused whatever the net', () => {
        for (const family of [AF_INET, AF_INET6, AF_NETLINK, AF_PACKET, AF_VSOCK]) {
          expect(run(host, { nr: arch.socket, arch: arch.audit, args: [family, 1, 0] })).toBe(ALLOW)
        }
        expect(run(host, { nr: arch.socket, arch: arch.audit, args: [AF_UNIX, 1, 0] })).toBe(EPERM)
      })

      it('looks only at the int the kernel reads: upper bits of the register do not matter', () => {
        const unixWithGarbage = 2 ** 32 + AF_UNIX
        const inetWithGarbage = 2 ** 40 + AF_INET
        expect(run(host, { nr: arch.socket, arch: arch.audit, args: [unixWithGarbage] })).toBe(EPERM)
        expect(run(host, { nr: arch.socket, arch: arch.audit, args: [inetWithGarbage] })).toBe(ALLOW)
        expect(run(none, { nr: arch.socket, arch: arch.audit, args: [inetWithGarbage] })).toBe(EPERM)
      })

      it('refuses the keyring calls with EPERM, io_uring_setup with ENOSYS, and allows everything else', () => {
        for (const filter of [none, host]) {
          for (const nr of arch.keyring) expect(run(filter, { nr, arch: arch.audit })).toBe(EPERM)
          expect(run(filter, { nr: arch.ioUringSetup, arch: arch.audit })).toBe(ENOSYS)
          for (const nr of [0, 1, 59, 60, 231, 221, 93, 424, 426]) {
            if (nr === arch.socket || (arch.keyring as readonly number[]).includes(nr)) continue
            expect(run(filter, { nr, arch: arch.audit, args: [AF_INET] })).toBe(ALLOW)
          }
        }
      })
    })
  }

  it('refuses x32 system calls on x86_64 (socket, and any other)', () => {
    const x32 = ARCHES.x86_64.x32Bit
    expect(run(host, { nr: x32 | 41, arch: ARCHES.x86_64.audit, args: [AF_INET] })).toBe(ENOSYS)
    expect(run(host, { nr: x32 | 39, arch: ARCHES.x86_64.audit })).toBe(ENOSYS)
  })

  it('kills a process of any other architecture (i386 int 0x80, arm32 compat)', () => {
    const i386 = 0x40000003
    const arm = 0x40000028
    for (const filter of [none, host]) {
      expect(run(filter, { nr: 102, arch: i386, args: [1, 0] })).toBe(KILL_PROCESS) // socketcall
      expect(run(filter, { nr: 281, arch: arm, args: [AF_INET] })).toBe(KILL_PROCESS)
    }
  })

  it('encodes struct sock_filter as u16 code, u8 jt, u8 jf, u32 k, little-endian', () => {
    const bytes = encodeFilter([{ code: 0x15, jt: 1, jf: 2, k: 0xc000003e }])
    expect([...bytes]).toEqual([0x15, 0x00, 0x01, 0x02, 0x3e, 0x00, 0x00, 0xc0])
    const program = sandboxProgram({ net: 'none' })
    expect(program.length).toBe(none.length * 8)
    program[0] = 0xff
    expect(sandboxProgram({ net: 'none' })[0]).toBe(0x20)
  })
})
