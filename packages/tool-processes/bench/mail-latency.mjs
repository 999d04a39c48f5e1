// Latency from a service writing an event to its envelope being readable in the session's mailbox
// (digest `per: events, n: 1`), against the same producer read by a bare child_process pipe (the
// line parsed as JSON). The producer stamps each event with process.hrtime (CLOCK_MONOTONIC, one
// clock for every process of the machine); the reader takes the difference when the envelope is
// accepted (`mailbox.watch`, then `mailbox.deliver`) or the line is parsed. Rounds alternate
// toolvisor and baseline (AB, BA, ...). Target: toolvisor p99 <= 5 ms over 10,000 events.
// Run after `pnpm --filter @toolvisor/tool-processes build`: `node bench/mail-latency.mjs`.
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { answerOf, benchKernel, cleanup, percentile, verdict } from './lib.mjs'

const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4)
const PER_ROUND = Math.ceil(EVENTS / ROUNDS)
const TARGET_P99_MS = 5
const SESSION = 'bench'

const STAMPS = `#!/usr/bin/env node
// A service: COUNT events {"t": hrtime ns, "i": n}, one every ms, then it waits to be stopped.
if (process.argv[2] === 'describe') {
  process.stdout.write(JSON.stringify({ protocol: 2, slug: 'stamps', description: 'stamped events', args: [
    { name: 'count', description: 'how many', type: 'integer', backing_type: 'integer', arity: 'single', mode: 'positional' }],
    process: { mode: 'service', output: { framing: 'jsonl' }, digest: { per: 'events', n: 1 } } }))
} else {
  const count = Number(process.argv[3])
  let i = 0
  const tick = () => {
    process.stdout.write(JSON.stringify({ t: String(process.hrtime.bigint()), i: i++ }) + '\\n')
    if (i < count) setTimeout(tick, 1)
  }
  tick()
  setInterval(() => {}, 60_000)
}
`

const bench = await benchKernel({ stamps: STAMPS })
const { tools, mailbox, sessions } = bench
sessions.open({ id: SESSION })
const ctx = { sessionId: SESSION, signal: new AbortController().signal }
const lag = (stamp) => Number(process.hrtime.bigint() - BigInt(stamp)) / 1e6

/** One round through toolvisor: a service started, its envelopes timed as they are accepted. */
async function viaToolvisor(latencies) {
  let got = 0
  let done
  const finished = new Promise((resolve) => {
    done = resolve
  })
  const unwatch = mailbox.watch(SESSION, () => {
    // The host's delivery point, at once: what an in-process host folding mail into its turn does.
    const page = mailbox.deliver(SESSION)
    for (const envelope of page.envelopes) {
      if (envelope.kind !== 'event') continue
      latencies.push(lag(envelope.body.t))
      if (++got === PER_ROUND) done()
    }
  })
  const handle = await answerOf(tools, 'stamps', { count: PER_ROUND }, ctx)
  await finished
  unwatch()
  await answerOf(tools, 'processes', { command: 'stop', process: handle.process }, ctx)
  mailbox.deliver(SESSION)
}

/** The same producer read by hand: spawn, split lines, parse, time. */
function viaPipe(latencies) {
  return new Promise((resolve, reject) => {
    const child = spawn(join(bench.root, 'toolbox', 'stamps'), ['run', String(PER_ROUND)], { detached: true })
    let got = 0
    let pending = ''
    child.on('error', reject)
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', (chunk) => {
      const lines = (pending + chunk).split('\n')
      pending = lines.pop()
      for (const line of lines) {
        latencies.push(lag(JSON.parse(line).t))
        if (++got === PER_ROUND) process.kill(-child.pid, 'SIGTERM')
      }
    })
    child.on('close', resolve)
  })
}

const toolvisor = []
const baseline = []
try {
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2 === 0) {
      await viaToolvisor(toolvisor)
      await viaPipe(baseline)
    } else {
      await viaPipe(baseline)
      await viaToolvisor(toolvisor)
    }
  }
  for (const p of [50, 99]) {
    const tv = percentile(toolvisor, p)
    const base = percentile(baseline, p)
    const target =
      p === 99 ? ` (target toolvisor <= ${TARGET_P99_MS} ms) ${verdict(tv <= TARGET_P99_MS)}` : ''
    console.log(
      `mail latency p${p} over ${toolvisor.length} events: toolvisor ${tv.toFixed(3)} ms, baseline ${base.toFixed(3)} ms, ` +
        `ratio ${(tv / base).toFixed(2)}${target}`,
    )
  }
} finally {
  await cleanup('mail latency', bench)
}
