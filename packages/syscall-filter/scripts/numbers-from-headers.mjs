// Prints the syscall numbers this machine's kernel headers define, per architecture, as JSON:
// x86_64 from <asm/unistd_64.h>, aarch64 from <asm-generic/unistd.h> through the C preprocessor
// with the defines arm64's own <asm/unistd.h> sets. The test compares src/numbers.ts with it; the
// headers lag the kernel (Debian 12: 6.1), so numbers above what they know are checked by hand.
// Usage: node scripts/numbers-from-headers.mjs [x86_64|aarch64]

import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const X86_64 = '/usr/include/x86_64-linux-gnu/asm/unistd_64.h'
const GENERIC = '/usr/include/asm-generic/unistd.h'
// What arch/arm64/include/uapi/asm/unistd.h defines before including the generic table.
const ARM64_WANTS = [
  'RENAMEAT',
  'NEW_STAT',
  'SET_GET_RLIMIT',
  'TIME32_SYSCALLS',
  'SYS_CLONE3',
  'MEMFD_SECRET',
]

/** `{ name: number }` from `#define __NR_name value` lines, following `__NR3264_` aliases. */
function resolve(lines) {
  const defined = new Map()
  for (const line of lines) {
    const match = /^#define (__NR(?:3264)?_\w+) (\S+)/.exec(line)
    if (match) defined.set(match[1], match[2])
  }
  const numbers = {}
  for (const [macro, value] of defined) {
    if (!macro.startsWith('__NR_') || macro === '__NR_syscalls' || macro === '__NR_arch_specific_syscall')
      continue
    let v = value
    while (v !== undefined && !/^\d+$/.test(v)) v = defined.get(v)
    if (v !== undefined) numbers[macro.slice(5)] = Number(v)
  }
  return numbers
}

export function x86_64() {
  return existsSync(X86_64) ? resolve(readFileSync(X86_64, 'utf8').split('\n')) : undefined
}

export function aarch64() {
  if (!existsSync(GENERIC)) return undefined
  const defines = ['-D__BITS_PER_LONG=64', ...ARM64_WANTS.map((w) => `-D__ARCH_WANT_${w}`)]
  const cc = spawnSync('cc', ['-E', '-dM', ...defines, '-x', 'c', '-'], {
    input: '#include <asm-generic/unistd.h>\n',
    encoding: 'utf8',
  })
  return cc.status === 0 ? resolve(cc.stdout.split('\n')) : undefined
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const arch = process.argv[2] ?? 'x86_64'
  process.stdout.write(`${JSON.stringify(arch === 'aarch64' ? aarch64() : x86_64(), null, 1)}\n`)
}
