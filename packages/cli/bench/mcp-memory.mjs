// Memory of `toolvisor mcp` over many finished oneshot calls (issue 10.13: it grew 25-30 KB per
// call). Starts the real server over stdio, sends CALLS tools/call requests of a trivial tool
// (IN_FLIGHT at a time, raw JSON-RPC, no SDK on the client side), and samples the server's RSS
// and the V8 heap it reports. The baseline is the server's own RSS after the warm-up calls in the
// same run; the ratio is RSS after every call against it (target: at most 1.15, flat) and the
// growth per call, the slope of RSS over the measured part (target: under 1 KB; it was 25-30). Run after a build: `pnpm bench`.
import { spawn } from 'node:child_process'
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { bin, trivialToolbox } from './lib.mjs'

// The warm-up is where the server's RSS reaches its working size. It was 2,000 calls when a call
// took 4.6 ms here; since launches come from the fork server they take under 1 ms, and RSS now
// rises until about 6,500 calls (to a plateau it then keeps, flat over 60,000): 8,000 calls is
// about as long in time as the old warm-up was (docs/benchmarks.md, "Fork server").
const CALLS = Number(process.env.CALLS ?? 28_000)
const WARMUP = Number(process.env.WARMUP ?? 8_000)
const IN_FLIGHT = 16
const { root, toolbox } = trivialToolbox('mcp-memory')

const server = spawn(
  process.execPath,
  [bin, 'mcp', '--toolbox', toolbox, '--state-dir', join(root, 'state')],
  { stdio: ['pipe', 'pipe', 'inherit'] },
)
const pending = new Map()
createInterface({ input: server.stdout }).on('line', (line) => {
  const message = JSON.parse(line)
  const waiter = pending.get(message.id)
  if (waiter === undefined) return
  pending.delete(message.id)
  waiter(message)
})
let nextId = 1
const request = (method, params) =>
  new Promise((resolve) => {
    const id = nextId++
    pending.set(id, resolve)
    server.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`)
  })

/** The server's resident set, in MB. */
const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.pid}/status`, 'utf8'))[1]) / 1024

async function calls(count) {
  let done = 0
  let started = 0
  const worker = async () => {
    while (started < count) {
      started++
      const answer = await request('tools/call', { name: 'trivial', arguments: {} })
      const text = answer.result?.content?.[0]?.text
      if (answer.result?.isError || text !== 'ok\n') throw new Error(`call failed: ${JSON.stringify(answer)}`)
      done++
    }
  }
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker))
  return done
}

try {
  await request('initialize', {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'bench', version: '0' },
  })
  server.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`)
  // The tools are announced once loaded: wait until the tool is listed.
  for (;;) {
    const listed = await request('tools/list', {})
    if (listed.result?.tools?.some((t) => t.name === 'trivial')) break
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  const began = Date.now()
  await calls(WARMUP)
  const baseline = rss()
  const samples = [[WARMUP, baseline]]
  const step = (CALLS - WARMUP) / 8
  for (let done = WARMUP; done < CALLS; done += step) {
    await calls(step)
    samples.push([done + step, rss()])
  }
  const seconds = (Date.now() - began) / 1000
  const [, last] = samples.at(-1)
  const ratio = last / baseline
  // Least-squares slope of RSS over calls, in KB per call: what a leak would show, GC noise aside.
  const mean = (values) => values.reduce((a, b) => a + b, 0) / values.length
  const xs = samples.map(([n]) => n)
  const ys = samples.map(([, mb]) => mb * 1024)
  const [mx, my] = [mean(xs), mean(ys)]
  const perCall =
    xs.reduce((sum, x, i) => sum + (x - mx) * (ys[i] - my), 0) / xs.reduce((sum, x) => sum + (x - mx) ** 2, 0)
  console.log(`toolvisor mcp, ${CALLS} oneshot calls (${IN_FLIGHT} in flight) in ${seconds.toFixed(1)} s`)
  for (const [n, mb] of samples)
    console.log(`  after ${String(n).padStart(6)} calls: RSS ${mb.toFixed(1)} MB`)
  console.log(
    `  RSS after all calls / after warm-up: ${ratio.toFixed(3)} (target <= 1.15) ${ratio <= 1.15 ? 'PASS' : 'MISS'}`,
  )
  console.log(`  growth per call: ${perCall.toFixed(2)} KB (target < 1 KB) ${perCall < 1 ? 'PASS' : 'MISS'}`)
} finally {
  server.stdin.end()
  await new Promise((resolve) => server.once('exit', resolve))
  rmSync(root, { recursive: true, force: true })
}
