// Latency of a foreground `bash` call of `true` (tools.call on a kernel with the runtime, the
// toolbox and the bash plugin: validation, the working directory check, the launch through
// preparePlain and the final exec stage, the result text) against a bare `child_process.spawn` of
// the same bash with `-c true`, interleaved A/B per iteration. Target (issue 13): the median of
// the per-pair ratios (each pair run back to back, which cancels the drift of a shared machine's
// load, as docs/benchmarks.md does for throughput) <= 1.3; the p50s and p99s are printed too.
// Run after `pnpm --filter @toolvisor/tool-bash build`: `node bench/foreground.mjs`.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describePlugin } from '@toolvisor/describe-v2'
import { Kernel } from '@toolvisor/kernel'
import { markedProcesses, pinnedExecutable, RuntimeToken, runtimePlugin } from '@toolvisor/process-runtime'
import { tasksPlugin } from '@toolvisor/tasks'
import { ToolsToken, toolboxPlugin } from '@toolvisor/toolbox'
import { median, percentile, report, since, sleep, verdict } from '../../process-runtime/bench/lib.mjs'
import { bashPlugin } from '../dist/index.js'

const WARMUP = Number(process.env.BENCH_WARMUP ?? 30)
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 400)
const TARGET = 1.3
const bash = pinnedExecutable('bash')

/**
 * What a careful caller writes by hand: stdio piped, both streams drained, close awaited; the same
 * bash command line as the tool's (`--norc`: no startup file, see `bashArgv`).
 */
function bare() {
  return new Promise((resolve, reject) => {
    const child = spawn(bash, ['--norc', '--noprofile', '-c', 'true'], {
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    })
    child.on('error', reject)
    child.stdin.end()
    child.stdout.resume()
    child.stderr.resume()
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`bash -c true: exit ${code}`))))
  })
}

const root = mkdtempSync(join(tmpdir(), 'tv-bench-bash-'))
const kernel = new Kernel()
kernel.use(describePlugin)
kernel.use(runtimePlugin, { stateDir: join(root, 'state') })
kernel.use(tasksPlugin)
kernel.use(toolboxPlugin, {})
kernel.use(bashPlugin, { workdir: root })
await kernel.ready()
const tools = kernel.get(ToolsToken)
const runId = kernel.get(RuntimeToken).runId
const ctx = { sessionId: 'bench', signal: new AbortController().signal }

async function viaTool() {
  const result = await tools.call('bash', { command: 'true', description: 'do nothing' }, ctx)
  if (result.isError || result.content[0]?.text !== '(no output)')
    throw new Error(`bash call failed: ${JSON.stringify(result)}`)
}

async function timed(fn) {
  const start = process.hrtime.bigint()
  await fn()
  return since(start)
}

try {
  for (let i = 0; i < WARMUP; i++) {
    await viaTool()
    await bare()
  }
  const toolvisor = []
  const baseline = []
  for (let i = 0; i < ITERATIONS; i++) {
    const order = i % 2 === 0 ? [viaTool, bare] : [bare, viaTool]
    for (const fn of order) (fn === viaTool ? toolvisor : baseline).push(await timed(fn))
  }
  console.log(
    `bash foreground: ${ITERATIONS} interleaved calls of \`true\` (${WARMUP} warm-up), bash ${bash}`,
  )
  report('bash foreground latency (p50s; ratio: median of pairs)', {
    toolvisor: percentile(toolvisor, 50),
    baseline: percentile(baseline, 50),
    ratio: median(toolvisor.map((ms, i) => ms / baseline[i])),
    unit: 'ms',
    target: TARGET,
  })
  const [tv99, base99] = [percentile(toolvisor, 99), percentile(baseline, 99)]
  console.log(
    `bash foreground p99 latency: toolvisor ${tv99.toFixed(2)} ms, baseline ${base99.toFixed(2)} ms, ratio ${(tv99 / base99).toFixed(2)} (reported, no target)`,
  )
} finally {
  await kernel.dispose()
  const deadline = Date.now() + 2000
  while (markedProcesses(runId).length > 0 && Date.now() < deadline) await sleep(20)
  const left = markedProcesses(runId)
  rmSync(root, { recursive: true, force: true })
  console.log(
    `bash foreground cleanup: ${left.length} processes left, temp dir removed ${verdict(left.length === 0)}`,
  )
  if (left.length > 0) process.exitCode = 1
}
