// `chunks` bytes per second through the runtime (`runtime.start`, chunks framing, bytes counted
// with `onEvent`; every byte also goes to the spill file, as it must) against a bare
// `child_process` pipe read of the same producer (`head -c SIZE /dev/zero`). Rounds alternate.
// Run after `pnpm --filter @toolvisor/process-runtime build`: `node bench/chunks.mjs`.
import { spawn } from 'node:child_process'
import { rmSync } from 'node:fs'
import { alternate, benchRuntime, cleanup, median, preparedTool, report, since } from './lib.mjs'

const MiB = 1024 * 1024
const BYTES = Number(process.env.BENCH_BYTES ?? 512 * MiB)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8)
const WARMUP_ROUNDS = 1
const WARMUP_BYTES = 128 * MiB
const TARGET = 0.9 // issue 17
const HEAD = '/usr/bin/head'

const { runtime, root } = benchRuntime()
const tool = preparedTool(HEAD, { mode: 'stream', output: { framing: 'chunks' } })

/** Through the runtime: returns [bytes seen as events, ms]. */
async function viaRuntime(bytes) {
  let seen = 0
  const start = process.hrtime.bigint()
  const proc = runtime.start({
    tool,
    argv: ['-c', String(bytes), '/dev/zero'],
    onEvent: (event) => {
      seen += event.value.length
    },
  })
  const exit = await proc.exit
  const ms = since(start)
  const { spillPath, totalBytes } = proc.stdout()
  if (exit.code !== 0 || seen !== bytes || totalBytes !== bytes || spillPath === undefined)
    throw new Error(`runtime run: exit ${JSON.stringify(exit)}, ${seen} bytes seen, ${totalBytes} captured`)
  // One round's spill file must not make the disk slower for the next rounds.
  rmSync(spillPath)
  return [seen, ms]
}

/** The bare pipe read: spawn, count the bytes of every chunk, await close. Returns [bytes, ms]. */
function viaBarePipe(bytes) {
  return new Promise((resolve, reject) => {
    let seen = 0
    const start = process.hrtime.bigint()
    const child = spawn(HEAD, ['-c', String(bytes), '/dev/zero'], { stdio: ['ignore', 'pipe', 'pipe'] })
    child.on('error', reject)
    child.stderr.resume()
    child.stdout.on('data', (chunk) => {
      seen += chunk.length
    })
    child.on('close', (code) => {
      const ms = since(start)
      if (code !== 0 || seen !== bytes) reject(new Error(`bare pipe: exit ${code}, ${seen} bytes`))
      else resolve([seen, ms])
    })
  })
}

try {
  for (let i = 0; i < WARMUP_ROUNDS; i++) {
    await viaRuntime(WARMUP_BYTES)
    await viaBarePipe(WARMUP_BYTES)
  }
  const rate = ([bytes, ms]) => bytes / MiB / (ms / 1000)
  const runs = await alternate(
    ROUNDS,
    async () => rate(await viaRuntime(BYTES)),
    async () => rate(await viaBarePipe(BYTES)),
    (value) => `${value.toFixed(0)} MiB/s`,
  )
  console.log(
    `chunks: ${ROUNDS} alternating rounds of ${BYTES / MiB} MiB each, after ${WARMUP_ROUNDS} warm-up rounds; ` +
      'rates are medians, the ratio is the median of the paired rounds',
  )
  report('chunks bytes/s', {
    toolvisor: median(runs.toolvisor),
    baseline: median(runs.baseline),
    ratio: median(runs.ratios),
    unit: 'MiB/s',
    target: TARGET,
    higherIsBetter: true,
    digits: 0,
  })
} finally {
  await cleanup('chunks', runtime, root)
}
