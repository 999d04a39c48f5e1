import type { SockFilter } from './bpf.js'

/** The `struct seccomp_data` a program is run over (args are 64-bit registers). */
export interface SeccompData {
  readonly nr: number
  readonly arch: number
  readonly args?: readonly bigint[]
}

/** What a run gave: the return value, how many instructions ran, and whether any argument was read. */
export interface Outcome {
  readonly ret: number
  readonly steps: number
  readonly readArgs: boolean
}

/**
 * A classic-BPF interpreter for the instructions the filter uses, as the kernel runs them over a
 * `struct seccomp_data` (little-endian): so both architectures, x32 and any argument can be
 * checked here, and the real kernel runs the same bytes in the package's and the mechanisms' tests.
 */
export function interpret(program: readonly SockFilter[], data: SeccompData): Outcome {
  const bytes = new DataView(new ArrayBuffer(64))
  bytes.setUint32(0, data.nr >>> 0, true)
  bytes.setUint32(4, data.arch >>> 0, true)
  ;(data.args ?? []).forEach((value, i) => {
    bytes.setBigUint64(16 + 8 * i, BigInt.asUintN(64, value), true)
  })
  let acc = 0
  let steps = 0
  let readArgs = false
  for (let pc = 0; pc < program.length; pc++) {
    const insn = program[pc]!
    steps++
    switch (insn.code) {
      case 0x20: // BPF_LD | BPF_W | BPF_ABS
        if (insn.k % 4 !== 0 || insn.k > 60) throw new Error(`load at ${insn.k}, outside seccomp_data`)
        if (insn.k >= 16) readArgs = true
        acc = bytes.getUint32(insn.k, true)
        break
      case 0x54: // BPF_ALU | BPF_AND | BPF_K
        acc = (acc & insn.k) >>> 0
        break
      case 0x05: // BPF_JMP | BPF_JA
        pc += insn.k
        break
      case 0x15: // BPF_JMP | BPF_JEQ | BPF_K
        pc += acc === insn.k ? insn.jt : insn.jf
        break
      case 0x35: // BPF_JMP | BPF_JGE | BPF_K
        pc += acc >= insn.k ? insn.jt : insn.jf
        break
      case 0x45: // BPF_JMP | BPF_JSET | BPF_K
        pc += (acc & insn.k) !== 0 ? insn.jt : insn.jf
        break
      case 0x06: // BPF_RET | BPF_K
        return { ret: insn.k, steps, readArgs }
      default:
        throw new Error(`unexpected opcode 0x${insn.code.toString(16)} at ${pc}`)
    }
  }
  throw new Error('fell off the end of the program')
}
