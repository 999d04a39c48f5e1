import { existsSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { aarch64, x86_64 } from '../scripts/numbers-from-headers.mjs'
import { SYSCALL_NUMBERS } from './numbers.js'

const headers = { x86_64: x86_64(), aarch64: aarch64() }

describe('the syscall numbers', () => {
  for (const arch of ['x86_64', 'aarch64'] as const) {
    const found = headers[arch]
    it.skipIf(found === undefined)(
      `${arch}: every number the kernel headers here know is the table's (needs the headers and cc)`,
      () => {
        const differ = Object.entries(found!).filter(([name, nr]) => SYSCALL_NUMBERS[arch].get(name) !== nr)
        expect(differ).toEqual([])
        // The table's entries the headers lack are newer than them (checked by hand, below).
        const newer = [...SYSCALL_NUMBERS[arch]].filter(([name]) => !(name in found!))
        expect(newer.every(([, nr]) => nr > 450 || (arch === 'x86_64' && (nr === 335 || nr === 336)))).toBe(
          true,
        )
      },
    )
  }

  it('agree with the kernel tables for the calls the argument rules and the issue name (checked by hand)', () => {
    const pick = (arch: 'x86_64' | 'aarch64', calls: string[]) =>
      calls.map((c) => SYSCALL_NUMBERS[arch].get(c))
    const calls = [
      'socket',
      'socketpair',
      'clone',
      'clone3',
      'unshare',
      'setns',
      'ioctl',
      'personality',
      'keyctl',
    ]
    expect(pick('x86_64', calls)).toEqual([41, 53, 56, 435, 272, 308, 16, 135, 250])
    expect(pick('aarch64', calls)).toEqual([198, 199, 220, 435, 97, 268, 29, 92, 219])
    const newer = ['cachestat', 'fchmodat2', 'futex_wake', 'statmount', 'mseal', 'setxattrat', 'file_setattr']
    expect(pick('x86_64', newer)).toEqual([451, 452, 454, 457, 462, 463, 469])
    expect(pick('aarch64', newer)).toEqual([451, 452, 454, 457, 462, 463, 469])
    expect(pick('x86_64', ['uretprobe', 'uprobe', 'map_shadow_stack'])).toEqual([335, 336, 453])
    // aarch64 has none of the legacy path calls; x86_64 has them.
    expect(pick('aarch64', ['open', 'fork', 'stat', 'renameat'])).toEqual([
      undefined,
      undefined,
      undefined,
      38,
    ])
  })

  it('the headers script finds them where this machine has them', () => {
    if (existsSync('/usr/include/x86_64-linux-gnu/asm/unistd_64.h')) expect(headers.x86_64?.getppid).toBe(110)
  })
})
