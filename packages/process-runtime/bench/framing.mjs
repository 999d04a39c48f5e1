// The worst honest case of each framing, through the runtime (`runtime.start`, events counted with
// `onEvent`, every byte also in the spill file) against the same producer read bare by Node (pipe
// read, lines split the way a harness would, one string per line). Cases: 100-byte lines (the bulk
// target, >= 0.9x), 2-byte lines (an event per 2 bytes: per-event costs dominate), 10 MiB lines
// (each one event: joining a line's chunks dominates) and binary chunks (no framing work at all).
// Rounds alternate. Run after `pnpm --filter @toolvisor/process-runtime build`: `node bench/framing.mjs`.
import { spawn } from 'node:child_process'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import {
  alternate,
  benchRuntime,
  cleanup,
  median,
  preparedTool,
  producers,
  report,
  since,
  splitLines,
} from './lib.mjs'

const MiB = 1024 * 1024
const SCALE = Number(process.env.BENCH_SCALE ?? 1)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6)
const script = join(producers, 'pattern.mjs')

const CASES = [
  { name: 'lines of 100 bytes', bytes: 256 * MiB, line: 100, target: 0.9 },
  { name: 'lines of 2 bytes', bytes: 16 * MiB, line: 2, target: 0.8 },
  { name: 'lines of 10 MiB', bytes: 200 * MiB, line: 10 * MiB, target: 0.8 },
  { name: 'binary chunks', bytes: 256 * MiB, binary: true, target: 0.9 },
]

// Lines of 10 MiB are kept whole (the default longest line is 1 MiB).
const { runtime, root } = benchRuntime({ maxLineBytes: 16 * MiB })

/** The bytes a case writes: whole lines only. */
function bytesOf(c) {
  const bytes = Math.floor(c.bytes * SCALE)
  return c.binary ? bytes : Math.max(c.line, bytes - (bytes % c.line))
}

function argv(c) {
  const bytes = bytesOf(c)
  return [script, `--bytes=${bytes}`, c.binary ? '--binary' : `--line=${c.line}`]
}

function expected(c) {
  return c.binary ? bytesOf(c) : bytesOf(c) / c.line
}

/** Through the runtime: resolves to [bytes, ms] after checking every event and byte arrived. */
async function viaRuntime(c) {
  const tool = preparedTool(process.execPath, {
    mode: 'stream',
    output: { framing: c.binary ? 'chunks' : 'lines' },
  })
  let events = 0
  let bytes = 0
  const start = process.hrtime.bigint()
  const proc = runtime.start({
    tool,
    argv: argv(c),
    onEvent: (event) => {
      events++
      bytes += event.value.length
    },
  })
  const exit = await proc.exit
  const ms = since(start)
  const { spillPath, totalBytes } = proc.output.stdout()
  const want = expected(c)
  if (exit.code !== 0 || (c.binary ? bytes : events) !== want || spillPath === undefined)
    throw new Error(`${c.name}: exit ${JSON.stringify(exit)}, ${events} events, ${bytes} bytes, want ${want}`)
  rmSync(spillPath)
  return [totalBytes, ms]
}

/** The bare read: spawn, split lines into strings (or count chunk bytes), await close. */
function viaBare(c) {
  return new Promise((resolve, reject) => {
    let events = 0
    let bytes = 0
    const start = process.hrtime.bigint()
    const child = spawn(process.execPath, argv(c), { stdio: ['ignore', 'pipe', 'pipe'] })
    child.on('error', reject)
    child.stderr.resume()
    const split = splitLines(() => events++)
    child.stdout.on('data', (chunk) => {
      bytes += chunk.length
      if (!c.binary) split(chunk)
    })
    child.on('close', (code) => {
      const ms = since(start)
      const want = expected(c)
      if (code !== 0 || (c.binary ? bytes : events) !== want)
        reject(new Error(`${c.name} bare: exit ${code}, ${events} events, ${bytes} bytes, want ${want}`))
      else resolve([bytes, ms])
    })
  })
}

const rate = ([bytes, ms]) => bytes / MiB / (ms / 1000)
try {
  for (const c of CASES) {
    await viaRuntime({ ...c, bytes: Math.min(c.bytes, 32 * MiB) })
    await viaBare({ ...c, bytes: Math.min(c.bytes, 32 * MiB) })
    const runs = await alternate(
      ROUNDS,
      async () => rate(await viaRuntime(c)),
      async () => rate(await viaBare(c)),
      (value) => `${value.toFixed(0)} MiB/s`,
    )
    report(`framing, ${c.name}`, {
      toolvisor: median(runs.toolvisor),
      baseline: median(runs.baseline),
      ratio: median(runs.ratios),
      unit: 'MiB/s',
      target: c.target,
      higherIsBetter: true,
      digits: 0,
    })
  }
  console.log(
    `framing: ${ROUNDS} alternating rounds per case (scale ${SCALE}); rates are medians, each ratio the median of the paired rounds`,
  )
} finally {
  await cleanup('framing', runtime, root)
}
