// Start latency of a trivial tool (a copy of /usr/bin/true) through the runtime, the way every
// call runs it (runtime.start -> exit), under no sandbox, bwrap (every namespace: net none with its
// seccomp filter, tmp private) and landlock (fs grants), interleaved in the same run; ratios to no
// sandbox. Each case also runs the very launch the runtime assembles (the mechanism's wrapper, the
// final exec stage, the tool) spawned bare: the difference is what the runtime itself adds
// (target: within 0.5 ms of the mechanism's own cost). Run after a build: `pnpm bench`.
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import {
  assemble,
  builtExecHelper,
  markedProcesses,
  RAW_ONESHOT,
  RuntimeToken,
  spawnLaunch,
} from '@toolvisor/process-runtime'
import { ConfigFile } from '../dist/config.js'
import { compose } from '../dist/internal/compose.js'

const RUNS = Number(process.env.RUNS ?? 100)
const root = mkdtempSync('/var/tmp/tv-bench-sandbox-')
chmodSync(root, 0o755) // as root, sandboxed tools run as the sandbox user
// The tool's directory beside the state directories, never holding one (decision 0095).
const toolDir = join(root, 'tool')
mkdirSync(toolDir, { mode: 0o755 })
const tool = join(toolDir, 'true')
copyFileSync('/usr/bin/true', tool)

const runtimeSpec = (sandbox) => ({
  environment: {},
  timeout: {},
  onExit: 'report',
  cancel: { signal: 'SIGTERM' },
  ...(sandbox ? { sandbox } : {}),
})
const declaration = (fields) => ({
  fs: { read: [], write: [] },
  net: 'host',
  tmp: 'shared',
  declared: [],
  ...fields,
})

async function prepared(sandbox, fields) {
  const composed = await compose(
    ConfigFile.parse({ stateDir: join(root, `state-${sandbox ?? 'none'}`), ...(sandbox ? { sandbox } : {}) }),
    {
      loadToolboxes: false,
    },
  )
  const runtime = composed.kernel.get(RuntimeToken)
  const input = {
    path: tool,
    dir: toolDir,
    slug: 'true',
    process: RAW_ONESHOT,
    runtime: runtimeSpec(fields && declaration(fields)),
  }
  return { composed, runtime, tool: await runtime.prepare(input) }
}

const cases = {
  none: await prepared(undefined, undefined),
  bwrap: await prepared('bwrap', { net: 'none', tmp: 'private', declared: ['net', 'tmp'] }),
  landlock: await prepared('landlock', { fs: { read: ['/usr/share'], write: [] }, declared: ['fs.read'] }),
}

async function once({ runtime, tool }) {
  const began = performance.now()
  const exit = await runtime.start({ tool, argv: [] }).exit
  if (exit.code !== 0) throw new Error(`the tool failed: ${JSON.stringify(exit)}`)
  return performance.now() - began
}

/** The launch the runtime spawns for this case, spawned directly: the mechanism's own cost. */
function bare({ tool }) {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' }
  const { launch } = assemble(
    tool,
    { file: tool.path, args: [], env, cwd: root, extraFds: [] },
    builtExecHelper,
  )
  return () =>
    new Promise((resolve, reject) => {
      const began = performance.now()
      const { child, pipes } = spawnLaunch(launch)
      child.stdin.end()
      for (const pipe of pipes) pipe?.resume()
      child.stdout.resume()
      child.stderr.resume()
      child.on('error', reject)
      child.on('close', (code) =>
        code === 0 ? resolve(performance.now() - began) : reject(new Error(`exit ${code}`)),
      )
    })
}
const bareRuns = Object.fromEntries(Object.entries(cases).map(([name, c]) => [name, bare(c)]))

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
}

const times = { none: [], bwrap: [], landlock: [] }
const bareTimes = { none: [], bwrap: [], landlock: [] }
for (let i = 0; i < 10; i++) {
  for (const [name, c] of Object.entries(cases)) {
    await once(c)
    await bareRuns[name]()
  }
}
for (let i = 0; i < RUNS; i++) {
  // Rotate the order so that drift of the machine hits every case alike.
  const order = ['none', 'bwrap', 'landlock']
  for (let k = 0; k < i % 3; k++) order.push(order.shift())
  for (const name of order) {
    times[name].push(await once(cases[name]))
    bareTimes[name].push(await bareRuns[name]())
  }
}

const base = percentile(times.none, 50)
console.log(`sandbox start latency, trivial tool through runtime.start, ${RUNS} interleaved runs each:`)
for (const name of ['bwrap', 'landlock']) {
  const p50 = percentile(times[name], 50)
  const target = name === 'bwrap' ? 3 : 1.5
  console.log(
    `sandbox start ${name}: toolvisor ${p50.toFixed(2)} ms (p99 ${percentile(times[name], 99).toFixed(2)}), ` +
      `baseline no sandbox ${base.toFixed(2)} ms (p99 ${percentile(times.none, 99).toFixed(2)}), ` +
      `ratio ${(p50 / base).toFixed(2)} (expected about ${target})`,
  )
}

// What sandboxing costs through the runtime, against what the mechanism costs on its own (its
// wrapped launch spawned bare, against the unsandboxed launch spawned bare): the runtime's sandbox
// path (pins checked, grant descriptors opened) must stay within 0.5 ms of the mechanism's cost.
// The difference is taken within each round (its four starts ran back to back), then the median of
// the rounds: a drift of the machine between rounds moves all four of a round alike and cancels,
// where four medians taken apart each carry it (on this VM a bwrap start alone varies by ms).
const bareNone = percentile(bareTimes.none, 50)
for (const name of ['bwrap', 'landlock']) {
  const throughRuntime = percentile(times[name], 50) - base
  const mechanism = percentile(bareTimes[name], 50) - bareNone
  const perRound = times[name].map((t, i) => t - times.none[i] - (bareTimes[name][i] - bareTimes.none[i]))
  const extra = percentile(perRound, 50)
  console.log(
    `sandbox cost ${name}: through the runtime +${throughRuntime.toFixed(2)} ms over an unsandboxed start, ` +
      `the mechanism alone +${mechanism.toFixed(2)} ms over a bare start, difference ${extra.toFixed(2)} ms ` +
      `(median of each round's own; target <= 0.5) ${extra <= 0.5 ? 'PASS' : 'MISS'}`,
  )
}
// The runtime's own cost per start, sandboxed or not (issue 17 brings it down).
for (const name of ['none', 'bwrap', 'landlock']) {
  const through = percentile(times[name], 50)
  const direct = percentile(bareTimes[name], 50)
  console.log(
    `runtime cost ${name}: runtime.start ${through.toFixed(2)} ms, the same launch spawned bare ` +
      `${direct.toFixed(2)} ms, +${(through - direct).toFixed(2)} ms`,
  )
}

let left = 0
for (const { composed, runtime } of Object.values(cases)) {
  await composed.kernel.dispose()
  left += markedProcesses(runtime.runId).length
}
rmSync(root, { recursive: true, force: true })
console.log(`sandbox start cleanup: ${left} processes left, temp dir removed ${left === 0 ? 'PASS' : 'MISS'}`)
if (left > 0) process.exitCode = 1
