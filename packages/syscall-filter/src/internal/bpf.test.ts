import { describe, expect, it } from 'vitest'
import { SeccompError } from '../errors.js'
import { assemble, type Draft, encodeFilter, MAX_INSTRUCTIONS } from './bpf.js'
import { interpret } from './interpret.js'

const rets = (n: number, k = 1): Draft[] => Array.from({ length: n }, () => ({ op: 'ret', k }) as const)

describe('the assembler', () => {
  it('resolves labels to forward offsets', () => {
    const program = assemble([
      { op: 'ld', k: 0 },
      { op: 'jeq', k: 7, jt: 'yes', jf: 'no' },
      { op: 'label', name: 'no' },
      { op: 'ret', k: 0 },
      { op: 'label', name: 'yes' },
      { op: 'ret', k: 1 },
    ])
    expect(program.map((i) => [i.code, i.jt, i.jf, i.k])).toEqual([
      [0x20, 0, 0, 0],
      [0x15, 1, 0, 7],
      [0x06, 0, 0, 0],
      [0x06, 0, 0, 1],
    ])
  })

  it('reaches a target more than 255 instructions ahead through a ja trampoline, both ways', () => {
    const drafts: Draft[] = [
      { op: 'ld', k: 0 },
      { op: 'jge', k: 100, jt: 'far', jf: 'farther' },
      ...rets(300, 2),
      { op: 'label', name: 'far' },
      { op: 'ret', k: 3 },
      ...rets(300, 2),
      { op: 'label', name: 'farther' },
      { op: 'ret', k: 4 },
    ]
    const program = assemble(drafts)
    expect(program.filter((i) => i.code === 0x05)).toHaveLength(2)
    expect(interpret(program, { nr: 150, arch: 0 }).ret).toBe(3)
    expect(interpret(program, { nr: 50, arch: 0 }).ret).toBe(4)
  })

  it('refuses an unknown label, a label defined twice and a backward jump (classic BPF has none)', () => {
    expect(() => assemble([{ op: 'ja', to: 'nowhere' }, ...rets(1)])).toThrow('unknown label nowhere')
    const twice: Draft[] = [{ op: 'label', name: 'a' }, { op: 'label', name: 'a' }, ...rets(1)]
    expect(() => assemble(twice)).toThrow('label a defined twice')
    expect(() =>
      assemble([{ op: 'label', name: 'back' }, ...rets(1), { op: 'ja', to: 'back' }, ...rets(1)]),
    ).toThrow('jump back to back')
  })

  it('SECCOMP_ERR_TOO_LONG: a program above the kernel limit of 4096 instructions', () => {
    expect(assemble(rets(MAX_INSTRUCTIONS))).toHaveLength(MAX_INSTRUCTIONS)
    let error: unknown
    try {
      assemble(rets(MAX_INSTRUCTIONS + 1))
    } catch (caught) {
      error = caught
    }
    expect(SeccompError.is(error) && error.code).toBe('SECCOMP_ERR_TOO_LONG')
    expect((error as Error).message).toBe(
      "the syscall filter came out 4097 instructions long, above the kernel's 4096 (BPF_MAXINSNS): merge families or split the program",
    )
  })

  it('encodes little-endian struct sock_filter', () => {
    expect([...encodeFilter([{ code: 0x15, jt: 1, jf: 2, k: 0xc000003e }])]).toEqual([
      0x15, 0x00, 0x01, 0x02, 0x3e, 0x00, 0x00, 0xc0,
    ])
  })
})
