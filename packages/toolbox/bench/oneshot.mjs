// Latency of a trivial oneshot call through toolvisor (`tools.call` on a composed kernel) against a
// bare `child_process.spawn` of the same executable with the same argv, interleaved A/B per
// iteration so that drift (page cache, CPU frequency, other load) hits both alike.
// Run after `pnpm --filter @toolvisor/toolbox build`: `node bench/oneshot.mjs`.
import { spawn } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describePlugin } from '@toolvisor/describe-v2'
import { Kernel } from '@toolvisor/kernel'
import { markedProcesses, RuntimeToken, runtimePlugin } from '@toolvisor/process-runtime'
import { tasksPlugin } from '@toolvisor/tasks'
import { ToolsToken, toolboxPlugin } from '../dist/index.js'

const WARMUP = Number(process.env.BENCH_WARMUP ?? 30)
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 400)
/** Issue 17's targets: p50 within 1.15x of a bare spawn, p99 within 1.5x. */
const TARGETS = { 50: 1.15, 99: 1.5 }

const TRIVIAL = `#!/bin/sh
case "$1" in
describe) echo '{"slug": "trivial", "description": "prints ok", "args": []}' ;;
run) echo ok ;;
esac
`

/** A bare spawn, as a careful caller would write it: stdio piped, stdout collected, close awaited. */
function bare(path) {
  return new Promise((resolve, reject) => {
    const child = spawn(path, ['run'], { stdio: ['pipe', 'pipe', 'pipe'] })
    const chunks = []
    child.on('error', reject)
    child.stdin.end()
    child.stdout.on('data', (chunk) => chunks.push(chunk))
    child.stderr.resume()
    child.on('close', (code) => resolve({ code, stdout: Buffer.concat(chunks).toString('utf8') }))
  })
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]
}

function verdict(ok) {
  return ok ? 'PASS' : 'MISS'
}

const root = mkdtempSync(join(tmpdir(), 'tv-bench-oneshot-'))
const toolbox = join(root, 'toolbox')
mkdirSync(toolbox)
const trivial = join(toolbox, 'trivial')
writeFileSync(trivial, TRIVIAL)
chmodSync(trivial, 0o755)

const kernel = new Kernel()
kernel.use(describePlugin)
kernel.use(runtimePlugin, { stateDir: join(root, 'state') })
kernel.use(tasksPlugin)
await kernel.use(toolboxPlugin, { toolboxes: [toolbox] })
const tools = kernel.get(ToolsToken)
const runId = kernel.get(RuntimeToken).runId
const ctx = { sessionId: 'bench', signal: new AbortController().signal }

async function viaToolvisor() {
  const result = await tools.call('trivial', {}, ctx)
  if (result.isError || result.content[0]?.text !== 'ok\n')
    throw new Error(`toolvisor call failed: ${JSON.stringify(result)}`)
}

async function viaSpawn() {
  const result = await bare(trivial)
  if (result.code !== 0 || result.stdout !== 'ok\n')
    throw new Error(`bare spawn failed: ${JSON.stringify(result)}`)
}

async function timed(fn) {
  const start = process.hrtime.bigint()
  await fn()
  return Number(process.hrtime.bigint() - start) / 1e6
}

try {
  for (let i = 0; i < WARMUP; i++) {
    await viaToolvisor()
    await viaSpawn()
  }
  const toolvisor = []
  const baseline = []
  for (let i = 0; i < ITERATIONS; i++) {
    // Alternate which goes first so neither always runs right after the other's teardown.
    if (i % 2 === 0) {
      toolvisor.push(await timed(viaToolvisor))
      baseline.push(await timed(viaSpawn))
    } else {
      baseline.push(await timed(viaSpawn))
      toolvisor.push(await timed(viaToolvisor))
    }
  }
  toolvisor.sort((a, b) => a - b)
  baseline.sort((a, b) => a - b)
  console.log(`oneshot: ${ITERATIONS} interleaved calls of a trivial v1 tool (${WARMUP} warm-up)`)
  for (const p of [50, 99]) {
    const tv = percentile(toolvisor, p)
    const base = percentile(baseline, p)
    const ratio = tv / base
    const target = ` (target <= ${TARGETS[p]}) ${verdict(ratio <= TARGETS[p])}`
    console.log(
      `oneshot p${p} latency: toolvisor ${tv.toFixed(2)} ms, baseline ${base.toFixed(2)} ms, ratio ${ratio.toFixed(2)}${target}`,
    )
  }
} finally {
  await kernel.dispose()
  const deadline = Date.now() + 2000
  while (markedProcesses(runId).length > 0 && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 20))
  const left = markedProcesses(runId)
  rmSync(root, { recursive: true, force: true })
  console.log(`oneshot cleanup: ${left.length} processes left ${verdict(left.length === 0)}`)
  if (left.length > 0) process.exitCode = 1
}
