// 500 services started at once, listed and stopped, in one session: the time to start them all
// (every start answered with its handle), `processes list` of the 500 (median of 20, with p90, the
// worst and the CPU time it took, which a loaded machine does not stretch; target: median <= 10 ms),
// the time to stop them all (declared SIGTERM), and that nothing is left. The baseline is the same
// steps by hand: 500 `child_process.spawn`s of the same executable, then SIGTERM to each
// group and every `close` awaited. Run after `pnpm --filter @toolvisor/tool-processes build`:
// `node bench/services-500.mjs`.
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { markedProcesses } from '@toolvisor/process-runtime'
import { answerOf, benchKernel, cleanup, percentile, since, verdict } from './lib.mjs'

const SERVICES = Number(process.env.BENCH_SERVICES ?? 500)
const LISTS = 20
const TARGET_LIST_MS = 10
const SESSION = 'bench'

const SLEEPER = `#!/bin/sh
case "$1" in
describe) echo '{"protocol": 2, "slug": "sleeper", "description": "sleeps", "args": [], "process": {"mode": "service", "output": {"framing": "lines"}}}' ;;
run) exec sleep 3600 ;;
esac
`

const bench = await benchKernel({ sleeper: SLEEPER })
const { tools } = bench
/** A call's context: a signal of its own, as every MCP call has. */
const ctx = () => ({ sessionId: SESSION, signal: new AbortController().signal })

async function viaToolvisor() {
  let start = process.hrtime.bigint()
  const handles = await Promise.all(
    Array.from({ length: SERVICES }, () => answerOf(tools, 'sleeper', {}, ctx())),
  )
  const started = since(start)
  if (new Set(handles.map((h) => h.process)).size !== SERVICES || handles.some((h) => h.status !== 'running'))
    throw new Error('not every service started with a handle of its own')
  const lists = []
  const cpu = []
  for (let i = 0; i < LISTS; i++) {
    start = process.hrtime.bigint()
    const used = process.cpuUsage()
    const list = await answerOf(tools, 'processes', { command: 'list' }, ctx())
    lists.push(since(start))
    const { user, system } = process.cpuUsage(used)
    cpu.push((user + system) / 1000)
    if (list.processes.length !== SERVICES || list.elided)
      throw new Error(`list showed ${list.processes.length}`)
  }
  start = process.hrtime.bigint()
  const exits = await Promise.all(
    handles.map((h) => answerOf(tools, 'processes', { command: 'stop', process: h.process }, ctx())),
  )
  const stopped = since(start)
  if (exits.some((e) => e.signal !== 'SIGTERM')) throw new Error('a service did not stop on SIGTERM')
  return { started, lists, cpu, stopped, left: markedProcesses(bench.runId).length }
}

async function viaSpawn() {
  const script = join(bench.root, 'toolbox', 'sleeper')
  let start = process.hrtime.bigint()
  const children = await Promise.all(
    Array.from({ length: SERVICES }, () => {
      const child = spawn(script, ['run'], { stdio: ['pipe', 'pipe', 'pipe'], detached: true })
      const closed = new Promise((resolve) => child.on('close', resolve))
      return new Promise((resolve, reject) => {
        child.once('spawn', () => resolve({ child, closed }))
        child.once('error', reject)
      })
    }),
  )
  const started = since(start)
  start = process.hrtime.bigint()
  for (const { child } of children) process.kill(-child.pid, 'SIGTERM')
  await Promise.all(children.map((c) => c.closed))
  return { started, stopped: since(start) }
}

try {
  const tv = await viaToolvisor()
  const base = await viaSpawn()
  const ratio = (a, b) => (a / b).toFixed(2)
  console.log(
    `${SERVICES} services started: toolvisor ${tv.started.toFixed(0)} ms, baseline ${base.started.toFixed(0)} ms, ratio ${ratio(tv.started, base.started)} (no target)`,
  )
  const median = percentile(tv.lists, 50)
  console.log(
    `processes list of ${SERVICES}: median ${median.toFixed(2)} ms, p90 ${percentile(tv.lists, 90).toFixed(2)} ms, ` +
      `worst ${Math.max(...tv.lists).toFixed(2)} ms of ${LISTS}, CPU time median ${percentile(tv.cpu, 50).toFixed(2)} ms ` +
      `(target median <= ${TARGET_LIST_MS} ms) ${verdict(median <= TARGET_LIST_MS)}`,
  )
  console.log(
    `${SERVICES} services stopped: toolvisor ${tv.stopped.toFixed(0)} ms, baseline ${base.stopped.toFixed(0)} ms, ratio ${ratio(tv.stopped, base.stopped)} (no target)`,
  )
  console.log(`${SERVICES} services: ${tv.left} processes left after the stops ${verdict(tv.left === 0)}`)
  if (tv.left > 0) process.exitCode = 1
} finally {
  await cleanup('services', bench)
}
