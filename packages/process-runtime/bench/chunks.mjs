// `chunks` bytes per second through the runtime (`runtime.start`, chunks framing, bytes counted
// with `onEvent`; every byte also goes to the spill file, as it must) against a bare
// `child_process` pipe read of the same producer (`head -c SIZE /dev/zero`). Rounds alternate.
// A third side, reported beside the target: the bare read that also writes every byte to a fresh
// file (`writeSync`, as a harness keeping the output would), the floor of what the runtime does.
// Run after `pnpm --filter @toolvisor/process-runtime build`: `node bench/chunks.mjs`.
import { spawn } from 'node:child_process'
import { closeSync, openSync, rmSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { benchRuntime, cleanup, median, pairedRatio, preparedTool, report, rotate, since } from './lib.mjs'

const MiB = 1024 * 1024
const BYTES = Number(process.env.BENCH_BYTES ?? 512 * MiB)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8)
const WARMUP_ROUNDS = 1
const WARMUP_BYTES = 128 * MiB
const TARGET = 0.9 // issue 17
const HEAD = '/usr/bin/head'

// Every byte to the spill file, as before spills had a cap (decision 0092): the bench measures the
// spill write itself, not the 256 MiB cap that would stop it halfway through a round.
const { runtime, root } = benchRuntime({ spillBytes: BYTES, stateBytes: Number.MAX_SAFE_INTEGER })
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
  const { spillPath, totalBytes } = proc.output.stdout()
  if (exit.code !== 0 || seen !== bytes || totalBytes !== bytes || spillPath === undefined)
    throw new Error(`runtime run: exit ${JSON.stringify(exit)}, ${seen} bytes seen, ${totalBytes} captured`)
  // One round's spill file must not make the disk slower for the next rounds.
  rmSync(spillPath)
  return [seen, ms]
}

/**
 * The bare pipe read: spawn, count the bytes of every chunk, await close. Returns [bytes, ms]. With
 * `file`, every chunk is also written to that fresh file before the next is read.
 */
function viaBarePipe(bytes, file) {
  return new Promise((resolve, reject) => {
    let seen = 0
    const start = process.hrtime.bigint()
    const fd = file === undefined ? undefined : openSync(file, 'w', 0o600)
    const child = spawn(HEAD, ['-c', String(bytes), '/dev/zero'], { stdio: ['ignore', 'pipe', 'pipe'] })
    child.on('error', reject)
    child.stderr.resume()
    child.stdout.on('data', (chunk) => {
      seen += chunk.length
      if (fd !== undefined) for (let at = 0; at < chunk.length; ) at += writeSync(fd, chunk, at)
    })
    child.on('close', (code) => {
      const ms = since(start)
      if (fd !== undefined) {
        closeSync(fd)
        rmSync(file)
      }
      if (code !== 0 || seen !== bytes) reject(new Error(`bare pipe: exit ${code}, ${seen} bytes`))
      else resolve([seen, ms])
    })
  })
}

try {
  const file = join(root, 'bare-spill')
  for (let i = 0; i < WARMUP_ROUNDS; i++) {
    await viaRuntime(WARMUP_BYTES)
    await viaBarePipe(WARMUP_BYTES)
    await viaBarePipe(WARMUP_BYTES, file)
  }
  const rate = ([bytes, ms]) => bytes / MiB / (ms / 1000)
  const runs = await rotate(
    ROUNDS,
    {
      toolvisor: async () => rate(await viaRuntime(BYTES)),
      bare: async () => rate(await viaBarePipe(BYTES)),
      'bare+file': async () => rate(await viaBarePipe(BYTES, file)),
    },
    (value) => `${value.toFixed(0)} MiB/s`,
  )
  console.log(
    `chunks: ${ROUNDS} rounds of ${BYTES / MiB} MiB each (order rotating), after ${WARMUP_ROUNDS} warm-up rounds; ` +
      "rates are medians, a ratio is the median of the rounds' ratios",
  )
  report('chunks bytes/s', {
    toolvisor: median(runs.toolvisor),
    baseline: median(runs.bare),
    ratio: pairedRatio(runs.toolvisor, runs.bare),
    unit: 'MiB/s',
    target: TARGET,
    higherIsBetter: true,
    digits: 0,
  })
  const floor = median(runs['bare+file'])
  console.log(
    `chunks, the bare read writing every byte to a file: ${floor.toFixed(0)} MiB/s, ` +
      `${pairedRatio(runs['bare+file'], runs.bare).toFixed(2)} of the bare read; ` +
      `toolvisor against it ${pairedRatio(runs.toolvisor, runs['bare+file']).toFixed(2)} (reported)`,
  )
} finally {
  await cleanup('chunks', runtime, root)
}
