// RSS of the runtime's process while one stream task emits 2 GiB of jsonl (~1 KiB lines,
// validated, every byte spilled, a follower reading 100 events through the task registry every
// 250 ms), against the same producer read by a bare parse-and-validate loop. Each side runs in a
// fresh child node process; this process samples the child's VmRSS from /proc every 250 ms.
// Run after `pnpm --filter @toolvisor/process-runtime build`: `node bench/memory.mjs`.
import { spawn } from 'node:child_process'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { compileEventSchema } from '@toolvisor/describe-v2'
import {
  benchRuntime,
  cleanup,
  preparedTool,
  producers,
  reportGrowth,
  sampleRss,
  slope,
  splitLines,
  verdict,
} from './lib.mjs'

const MiB = 1024 * 1024
const BYTES = Number(process.env.BENCH_BYTES ?? 2048 * MiB)
const PAD = 1000 // ~1 KiB lines: 2 GiB is about 2 million events
const SAMPLE_MS = 250
const TARGET_MB = 32 // issue 17: growth while streaming 2 GiB
const script = join(producers, 'jsonl.mjs')
const producerArgs = [script, `--bytes=${BYTES}`, String(PAD)]

const schema = {
  type: 'object',
  required: ['n', 'level', 'msg'],
  properties: { n: { type: 'integer', minimum: 0 }, level: { type: 'string' }, msg: { type: 'string' } },
}

/** Tells the sampling parent what happens: one JSON line per phase on stdout. */
function tell(message) {
  process.stdout.write(`${JSON.stringify(message)}\n`)
}

/** The toolvisor side: a runtime, a task registry, one stream task, one follower. */
async function childToolvisor() {
  // The task registry is @toolvisor/tasks' (which depends on this package): a bench-time import.
  const { createTaskRegistry } = await import('../../tasks/dist/index.js')
  const validate = compileEventSchema(schema)
  const { runtime, root } = benchRuntime()
  const tasks = createTaskRegistry(runtime)
  const tool = preparedTool(process.execPath, {
    mode: 'stream',
    output: { framing: 'jsonl', event: schema, validate },
  })
  globalThis.gc?.()
  tell({ phase: 'start' })
  const proc = runtime.start({ tool, argv: producerArgs })
  const task = tasks.add({ kind: 'stream', tool: 'producer', process: proc, owner: 'bench' })
  let followed = 0
  const follower = setInterval(() => {
    followed += tasks.read(task.id, 'bench', { max: 100 }).events.length
  }, SAMPLE_MS)
  const exit = await proc.exit
  clearInterval(follower)
  const { events, invalidEvents, stdoutBytes } = proc.output.counters()
  tell({ phase: 'end', events, invalidEvents, bytes: stdoutBytes, followed, code: exit.code })
  // Remove the spill file (and the whole state dir) before the next side runs.
  const spill = proc.output.stdout().spillPath
  if (spill) rmSync(spill)
  await cleanup('memory (toolvisor child)', runtime, root)
}

/** The baseline side: spawn the producer, split, parse and validate inline, count. */
async function childBaseline() {
  const validate = compileEventSchema(schema)
  globalThis.gc?.()
  tell({ phase: 'start' })
  let events = 0
  let invalidEvents = 0
  let bytes = 0
  const take = (text) => {
    if (validate(JSON.parse(text)) === undefined) events++
    else invalidEvents++
  }
  const child = spawn(process.execPath, producerArgs, { stdio: ['ignore', 'pipe', 'inherit'] })
  const split = splitLines(take)
  child.stdout.on('data', (chunk) => {
    bytes += chunk.length
    split(chunk)
  })
  const code = await new Promise((resolve) => child.on('close', resolve))
  tell({ phase: 'end', events, invalidEvents, bytes, code })
}

/** Runs one side in a fresh node, sampling its RSS from `start` to `end`. */
async function measure(side) {
  const self = fileURLToPath(import.meta.url)
  const child = spawn(process.execPath, ['--expose-gc', self, 'child', side], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const { samples, notes, ended, code } = await sampleRss(child, SAMPLE_MS)
  if (
    code !== 0 ||
    ended === undefined ||
    ended.code !== 0 ||
    ended.invalidEvents !== 0 ||
    ended.bytes < BYTES
  )
    throw new Error(`${side} child failed: exit ${code}, ${JSON.stringify(ended)}`)
  samples.push({ t: ended.t, rss: ended.rss })
  const start = samples[0].rss
  const max = Math.max(...samples.map((s) => s.rss))
  const secondHalf = samples.filter((s) => s.t >= ended.t / 2)
  const result = { start, max, end: ended.rss, growth: max - start, slope: slope(secondHalf), ...ended }
  console.log(
    `  ${side.padEnd(9)}: start ${start.toFixed(1)} MB, max ${max.toFixed(1)} MB, end ${ended.rss.toFixed(1)} MB, ` +
      `second-half slope ${result.slope >= 0 ? '+' : ''}${result.slope.toFixed(2)} MB/s over ${secondHalf.length} samples, ` +
      `${ended.t.toFixed(1)} s, ${ended.events} events` +
      (ended.followed === undefined ? '' : ` (${ended.followed} read by the follower)`),
  )
  for (const note of notes) console.log(note)
  return result
}

if (process.argv[2] === 'child') {
  if (process.argv[3] === 'toolvisor') await childToolvisor()
  else await childBaseline()
} else {
  console.log(
    `memory: one stream task emitting ${BYTES / MiB} MiB of ~1 KiB jsonl lines; VmRSS sampled every ${SAMPLE_MS} ms`,
  )
  const toolvisor = await measure('toolvisor')
  const baseline = await measure('baseline')
  reportGrowth('rss growth', toolvisor, baseline, TARGET_MB)
  const drift = toolvisor.slope * (toolvisor.t / 2)
  console.log(
    `memory flat: toolvisor second-half slope ${toolvisor.slope >= 0 ? '+' : ''}${toolvisor.slope.toFixed(2)} MB/s, ` +
      `${drift >= 0 ? '+' : ''}${drift.toFixed(1)} MB over the second half (target |drift| <= ${TARGET_MB / 4} MB) ` +
      verdict(Math.abs(drift) <= TARGET_MB / 4),
  )
}
