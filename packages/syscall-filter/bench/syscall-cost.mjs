// The per-call cost of the filter: 1M getppid() (allowed by the table: the kernel's action cache
// answers it without running the program) and 1M ioctl(FIONREAD) (an argument rule: the program
// runs each time), with no filter and under each variant, interleaved in the same run; ratios to
// no filter, of the best round of each (other load only ever adds time). Needs cc. Run after a
// build: `pnpm --filter @toolvisor/syscall-filter bench`.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { syscallFilter } from '../dist/index.js'

const ROUNDS = Number(process.env.ROUNDS ?? 15)
const N = String(process.env.N ?? 1_000_000)
const place = mkdtempSync(join(tmpdir(), 'tv-seccomp-bench-'))
try {
  const loop = join(place, 'loop')
  execFileSync('cc', ['-O2', '-o', loop, new URL('./loop.c', import.meta.url).pathname])
  const cases = { none: '-' }
  for (const [name, options] of Object.entries({
    'bwrap (net none, ipc namespaced)': { net: 'none', ipc: 'namespaced' },
    'landlock (net host, ipc host)': { net: 'host', ipc: 'host' },
  })) {
    cases[name] = join(place, `${options.net}-${options.ipc}.bpf`)
    writeFileSync(cases[name], syscallFilter(options))
  }
  const samples = Object.fromEntries(Object.keys(cases).map((name) => [name, { getppid: [], ioctl: [] }]))
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, file] of Object.entries(cases)) {
      const [, getppid, , ioctl] = execFileSync(loop, [file, N], { encoding: 'utf8' }).trim().split(' ')
      samples[name].getppid.push(Number(getppid))
      samples[name].ioctl.push(Number(ioctl))
    }
  }
  const best = (values) => Math.min(...values)
  const base = samples.none
  for (const [name, got] of Object.entries(samples)) {
    if (name === 'none') continue
    for (const call of ['getppid', 'ioctl']) {
      const ns = best(got[call])
      const ratio = ns / best(base[call])
      process.stdout.write(
        `syscall cost ${name} ${call}: ${ns.toFixed(1)} ns, no filter ${best(base[call]).toFixed(1)} ns, ratio ${ratio.toFixed(2)} (best of ${ROUNDS})\n`,
      )
    }
  }
} finally {
  rmSync(place, { recursive: true, force: true })
}
