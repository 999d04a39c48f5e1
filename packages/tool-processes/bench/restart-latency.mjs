// How long an `on_exit: restart` service takes from one run's start to the next, against the same
// program restarted by hand (spawn, wait for its exit, the same delay, spawn again). Issue 28 saw a
// restart take the backoff plus 0.4-1 s in `starting`; this measures what a restart adds now. The
// program prints {"t": hrtime ns} at its start and exits 1; the delay is a constant 50 ms (baseMs =
// maxMs). Rounds alternate toolvisor and baseline. Target: median gap ratio <= 1.5.
// Run after `pnpm --filter @toolvisor/tool-processes build`: `node bench/restart-latency.mjs`.
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { report } from '../../process-runtime/bench/lib.mjs'
import { answerOf, benchKernel, cleanup, percentile } from './lib.mjs'

const RESTARTS = Number(process.env.BENCH_RESTARTS ?? 30)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2)
const DELAY_MS = 50
const TARGET = 1.5
const SESSION = 'bench'

const CRASHER = `#!/usr/bin/env node
if (process.argv[2] === 'describe') {
  process.stdout.write(JSON.stringify({ protocol: 2, slug: 'crasher', description: 'starts and crashes', args: [],
    process: { mode: 'service', output: { framing: 'jsonl' } }, runtime: { on_exit: 'restart' } }))
} else {
  process.stdout.write(JSON.stringify({ t: String(process.hrtime.bigint()) }) + '\\n')
  process.exitCode = 1
}
`

const policy = { baseMs: DELAY_MS, maxMs: DELAY_MS, max: RESTARTS + 5, resetAfterMs: 60_000 }
const bench = await benchKernel({ crasher: CRASHER }, { restart: policy })
const { tools, sessions } = bench
sessions.open({ id: SESSION })
const ctx = { sessionId: SESSION, signal: new AbortController().signal }
const script = join(bench.root, 'toolbox', 'crasher')

/** Gaps (ms) between consecutive run starts of the service, over RESTARTS restarts. */
async function toolvisorGaps() {
  const { process: handle } = await answerOf(tools, 'crasher', {}, ctx)
  const stamps = []
  for (let offset = 0; stamps.length <= RESTARTS; ) {
    const page = await answerOf(
      tools,
      'processes',
      { command: 'page', process: handle, offset, max: 100 },
      ctx,
    )
    for (const event of page.events) stamps.push(BigInt(event.t))
    offset = page.next
    if (stamps.length <= RESTARTS) await new Promise((resolve) => setTimeout(resolve, 20))
  }
  await answerOf(tools, 'processes', { command: 'stop', process: handle }, ctx)
  return gaps(stamps.slice(0, RESTARTS + 1))
}

/** The same by hand: spawn, its exit, the same delay, spawn again. */
async function baselineGaps() {
  const stamps = []
  for (let i = 0; i <= RESTARTS; i++) {
    const child = spawn(script, ['run'], { stdio: ['ignore', 'pipe', 'ignore'] })
    let out = ''
    child.stdout.on('data', (chunk) => (out += chunk))
    await new Promise((resolve) => child.on('close', resolve))
    stamps.push(BigInt(JSON.parse(out).t))
    if (i < RESTARTS) await new Promise((resolve) => setTimeout(resolve, DELAY_MS))
  }
  return gaps(stamps)
}

function gaps(stamps) {
  return stamps.slice(1).map((stamp, i) => Number(stamp - stamps[i]) / 1e6)
}

const ours = []
const theirs = []
for (let round = 0; round < ROUNDS; round++) {
  if (round % 2 === 0) {
    ours.push(...(await toolvisorGaps()))
    theirs.push(...(await baselineGaps()))
  } else {
    theirs.push(...(await baselineGaps()))
    ours.push(...(await toolvisorGaps()))
  }
}
report(
  `restart-latency (a run's start to the next, ${DELAY_MS} ms delay, median of ${ours.length}, p90 ${percentile(ours, 90).toFixed(1)} ms)`,
  {
    toolvisor: percentile(ours, 50),
    baseline: percentile(theirs, 50),
    unit: 'ms',
    target: TARGET,
    digits: 1,
  },
)
await cleanup('restart-latency', bench)
