// jsonl events validated per second through the runtime (`runtime.start`, jsonl framing, a
// compiled validator, events counted with `onEvent`) against a bare loop that spawns the same
// producer and splits, parses and validates inline with the same validator. Rounds alternate.
// Run after `pnpm --filter @toolvisor/process-runtime build`: `node bench/jsonl.mjs`.
import { spawn } from 'node:child_process'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { compileEventSchema } from '@toolvisor/describe-v2'
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

const LINES = Number(process.env.BENCH_LINES ?? 2_000_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6)
const WARMUP_ROUNDS = 2
const WARMUP_LINES = 300_000
const TARGET = 1.0 // issue 17: at least the bare parse-and-validate loop

const script = join(producers, 'jsonl.mjs')
const schema = {
  type: 'object',
  required: ['n', 'level', 'msg'],
  properties: {
    n: { type: 'integer', minimum: 0 },
    level: { enum: ['debug', 'info', 'warn', 'error'] },
    msg: { type: 'string' },
  },
}
const validate = compileEventSchema(schema)

const { runtime, root } = benchRuntime()
const tool = preparedTool(process.execPath, {
  mode: 'stream',
  output: { framing: 'jsonl', event: schema, validate },
})

/** Through the runtime: returns [valid events, ms]. */
async function viaRuntime(lines) {
  let events = 0
  const start = process.hrtime.bigint()
  const proc = runtime.start({
    tool,
    argv: [script, String(lines)],
    onEvent: () => {
      events++
    },
  })
  const exit = await proc.exit
  const ms = since(start)
  const { invalidEvents } = proc.output.counters()
  if (exit.code !== 0 || invalidEvents !== 0 || events !== lines)
    throw new Error(`runtime run: exit ${JSON.stringify(exit)}, ${events} events, ${invalidEvents} invalid`)
  // One round's spill file must not make the disk slower for the next rounds.
  const { spillPath } = proc.output.stdout()
  if (spillPath) rmSync(spillPath)
  return [events, ms]
}

/** The bare loop: spawn, split on newlines, parse, validate, count. Returns [valid events, ms]. */
function viaBareLoop(lines) {
  return new Promise((resolve, reject) => {
    let events = 0
    let invalid = 0
    const take = (text) => {
      if (validate(JSON.parse(text)) === undefined) events++
      else invalid++
    }
    const start = process.hrtime.bigint()
    const child = spawn(process.execPath, [script, String(lines)], { stdio: ['ignore', 'pipe', 'pipe'] })
    child.on('error', reject)
    child.stderr.resume()
    child.stdout.on('data', splitLines(take))
    child.on('close', (code) => {
      const ms = since(start)
      if (code !== 0 || invalid !== 0 || events !== lines)
        reject(new Error(`bare loop: exit ${code}, ${events} events, ${invalid} invalid`))
      else resolve([events, ms])
    })
  })
}

try {
  for (let i = 0; i < WARMUP_ROUNDS; i++) {
    await viaRuntime(WARMUP_LINES)
    await viaBareLoop(WARMUP_LINES)
  }
  const rate = ([events, ms]) => events / (ms / 1000) / 1e6
  const runs = await alternate(
    ROUNDS,
    async () => rate(await viaRuntime(LINES)),
    async () => rate(await viaBareLoop(LINES)),
  )
  console.log(
    `jsonl: ${ROUNDS} alternating rounds of ${LINES / 1e6}M validated ~40-byte events each, ` +
      `after ${WARMUP_ROUNDS} warm-up rounds; rates are medians, the ratio is the median of the paired rounds`,
  )
  report('jsonl events/s', {
    toolvisor: median(runs.toolvisor),
    baseline: median(runs.baseline),
    ratio: median(runs.ratios),
    unit: 'M events/s',
    target: TARGET,
    higherIsBetter: true,
  })
} finally {
  await cleanup('jsonl', runtime, root)
}
