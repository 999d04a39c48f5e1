// What a spawn costs, and what makes it cost more: the two terms behind the oneshot ratios.
// 1. `child_process.spawn` returns after the fork and the exec; the fork copies the parent's page
//    tables, so its time grows with the parent's resident memory. Measured here for the same
//    process at three sizes (extra memory touched on purpose), interleaved.
// 2. The final exec stage (`toolvisor-exec`, run from a descriptor like the runtime does) in front
//    of the tool: one more exec, measured against the tool spawned directly.
// No target: it explains the others. Run after a build: `node bench/spawn-cost.mjs`.
import { spawn } from 'node:child_process'
import { openSync } from 'node:fs'
import { builtExecHelper } from '../dist/index.js'
import { median, percentile, since } from './lib.mjs'

const ROUNDS = Number(process.env.BENCH_ITERATIONS ?? 200)
const TRUE = '/bin/true'

/** Resolves to [ms until spawn() returned, ms until close]. */
function once(file, args, stdio) {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint()
    const child = spawn(file, args, { stdio })
    const returned = since(start)
    child.on('error', reject)
    child.on('close', (code) =>
      code === 0 ? resolve([returned, since(start)]) : reject(new Error(`exit ${code}`)),
    )
  })
}

const held = []
function grow(toMb) {
  while (held.length < toMb) held.push(Buffer.alloc(1024 * 1024, 1))
}

// The final exec stage first, while this process is small (a grown one makes every spawn slow).
const fd = openSync(builtExecHelper, 'r')
const direct = []
const staged = []
for (let i = 0; i < ROUNDS; i++) {
  direct.push((await once(TRUE, [], 'ignore'))[1])
  staged.push((await once(`/proc/self/fd/3`, ['--', TRUE], ['ignore', 'ignore', 'ignore', fd]))[1])
}
const rss = () => process.memoryUsage().rss / 1024 / 1024
const lines = []
for (const extra of [0, 100, 300]) {
  grow(extra)
  const sync = []
  for (let i = 0; i < ROUNDS; i++) sync.push((await once(TRUE, [], 'ignore'))[0])
  lines.push(
    `spawn() at ${rss().toFixed(0)} MB resident: p50 ${median(sync).toFixed(2)} ms, p99 ${percentile(sync, 99).toFixed(2)} ms (fork and exec, before the child runs)`,
  )
}

for (const line of lines) console.log(line)
console.log(
  `final exec stage: /bin/true direct p50 ${median(direct).toFixed(2)} ms, through toolvisor-exec p50 ${median(staged).toFixed(2)} ms, ratio ${(median(staged) / median(direct)).toFixed(2)} (no target)`,
)
