import { SeccompError } from '../errors.js'

/** One `struct sock_filter`: what the kernel runs. */
export interface SockFilter {
  /** The opcode: class, size and mode, or class, operation and source. */
  readonly code: number
  /** How many instructions a conditional jump skips when true. */
  readonly jt: number
  /** How many it skips when false. */
  readonly jf: number
  /** The constant: an offset, a value to compare, a return value, or a long jump's distance. */
  readonly k: number
}

/**
 * An instruction before assembly. Jumps name labels; a `label` names the instruction after it.
 * Conditionals name both targets, so none depends on what happens to follow it.
 */
export type Draft =
  | { readonly op: 'label'; readonly name: string }
  | { readonly op: 'ld' | 'and' | 'ret'; readonly k: number }
  | { readonly op: 'ja'; readonly to: string }
  | { readonly op: 'jeq' | 'jge' | 'jset'; readonly k: number; readonly jt: string; readonly jf: string }

type Conditional = Extract<Draft, { jt: string }>

/** Opcodes (linux/bpf_common.h): class | size | mode, or class | op | source. */
const CODE = {
  ld: 0x00 | 0x00 | 0x20, // BPF_LD | BPF_W | BPF_ABS
  and: 0x04 | 0x50 | 0x00, // BPF_ALU | BPF_AND | BPF_K
  ret: 0x06 | 0x00, // BPF_RET | BPF_K
  ja: 0x05 | 0x00, // BPF_JMP | BPF_JA
  jeq: 0x05 | 0x10 | 0x00, // BPF_JMP | BPF_JEQ | BPF_K
  jge: 0x05 | 0x30 | 0x00, // BPF_JMP | BPF_JGE | BPF_K
  jset: 0x05 | 0x40 | 0x00, // BPF_JMP | BPF_JSET | BPF_K
} as const

/** The kernel refuses longer programs (BPF_MAXINSNS). */
export const MAX_INSTRUCTIONS = 4096

/** Classic BPF conditionals jump at most 255 instructions forward (8-bit jt and jf). */
const SHORT = 255

/** Where each label points: the index of the next real instruction. */
function positions(drafts: readonly Draft[]): Map<string, number> {
  const at = new Map<string, number>()
  let index = 0
  for (const d of drafts) {
    if (d.op !== 'label') index++
    else if (at.has(d.name)) throw new Error(`seccomp assembler: label ${d.name} defined twice`)
    else at.set(d.name, index)
  }
  return at
}

function distance(at: ReadonlyMap<string, number>, from: number, to: string): number {
  const index = at.get(to)
  if (index === undefined) throw new Error(`seccomp assembler: unknown label ${to}`)
  const delta = index - from - 1
  if (delta < 0) throw new Error(`seccomp assembler: jump back to ${to} (classic BPF jumps forward only)`)
  return delta
}

/**
 * One relaxation pass: a conditional whose target lies more than 255 instructions ahead jumps
 * instead to a `ja` placed right after it, whose 32-bit offset reaches. Returns undefined when
 * nothing had to change.
 */
function relax(drafts: readonly Draft[], fresh: () => string): Draft[] | undefined {
  const at = positions(drafts)
  const out: Draft[] = []
  let index = 0
  let changed = false
  for (const d of drafts) {
    if (d.op === 'jeq' || d.op === 'jge' || d.op === 'jset') {
      const far = (to: string) => distance(at, index, to) > SHORT
      if (far(d.jt) || far(d.jf)) {
        changed = true
        const near: Conditional = {
          ...d,
          jt: far(d.jt) ? fresh() : d.jt,
          jf: far(d.jf) ? fresh() : d.jf,
        }
        out.push(near)
        // The trampolines sit between the conditional and what follows it: both names still hold.
        if (near.jt !== d.jt) out.push({ op: 'label', name: near.jt }, { op: 'ja', to: d.jt })
        if (near.jf !== d.jf) out.push({ op: 'label', name: near.jf }, { op: 'ja', to: d.jf })
        index++
        continue
      }
    }
    out.push(d)
    if (d.op !== 'label') index++
  }
  return changed ? out : undefined
}

/**
 * Resolves labels into the forward-only relative jumps of classic BPF, inserting `ja` trampolines
 * where a conditional's target is out of its 8-bit reach (each pass only inserts, so it ends).
 */
export function assemble(drafts: readonly Draft[]): SockFilter[] {
  let list: readonly Draft[] = drafts
  let trampolines = 0
  const fresh = () => `~trampoline${trampolines++}`
  for (let next = relax(list, fresh); next !== undefined; next = relax(list, fresh)) list = next
  const at = positions(list)
  const program: SockFilter[] = []
  for (const d of list) {
    const index = program.length
    if (d.op === 'label') continue
    if (d.op === 'ja') program.push({ code: CODE.ja, jt: 0, jf: 0, k: distance(at, index, d.to) })
    else if ('jt' in d) {
      program.push({
        code: CODE[d.op],
        jt: distance(at, index, d.jt),
        jf: distance(at, index, d.jf),
        k: d.k >>> 0,
      })
    } else program.push({ code: CODE[d.op], jt: 0, jf: 0, k: d.k >>> 0 })
  }
  if (program.length > MAX_INSTRUCTIONS) {
    throw new SeccompError(
      'SECCOMP_ERR_TOO_LONG',
      `the syscall filter came out ${program.length} instructions long, above the kernel's ${MAX_INSTRUCTIONS} (BPF_MAXINSNS): merge families or split the program`,
    )
  }
  if (program.at(-1)?.code !== CODE.ret)
    throw new Error('seccomp assembler: the last instruction must return')
  return program
}

/** Serialises instructions as the kernel's `struct sock_filter[]` (u16 code, u8 jt, u8 jf, u32 k; little-endian). */
export function encodeFilter(program: readonly SockFilter[]): Uint8Array {
  const bytes = new Uint8Array(program.length * 8)
  const view = new DataView(bytes.buffer)
  program.forEach((insn, i) => {
    view.setUint16(i * 8, insn.code, true)
    view.setUint8(i * 8 + 2, insn.jt)
    view.setUint8(i * 8 + 3, insn.jf)
    view.setUint32(i * 8 + 4, insn.k, true)
  })
  return bytes
}
