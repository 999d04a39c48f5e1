// Start latency of a trivial tool (a copy of /usr/bin/true) through the runtime, the way every
// call runs it (runtime.start -> exit), under no sandbox, bwrap (every namespace: net none with its
// seccomp filter, tmp private) and landlock (fs grants), interleaved in the same run; ratios to no
// sandbox. Run after a build: `pnpm bench`.
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { markedProcesses, RAW_ONESHOT, RuntimeToken } from '@toolvisor/process-runtime'
import { compose } from '../dist/compose.js'
import { ConfigFile } from '../dist/config.js'

const RUNS = Number(process.env.RUNS ?? 100)
const root = mkdtempSync('/var/tmp/tv-bench-sandbox-')
const tool = join(root, 'true')
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
    dir: root,
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

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
}

const times = { none: [], bwrap: [], landlock: [] }
for (let i = 0; i < 10; i++) for (const c of Object.values(cases)) await once(c)
for (let i = 0; i < RUNS; i++) {
  // Rotate the order so that drift of the machine hits every case alike.
  const order = ['none', 'bwrap', 'landlock']
  for (let k = 0; k < i % 3; k++) order.push(order.shift())
  for (const name of order) times[name].push(await once(cases[name]))
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

let left = 0
for (const { composed, runtime } of Object.values(cases)) {
  await composed.kernel.dispose()
  left += markedProcesses(runtime.runId).length
}
rmSync(root, { recursive: true, force: true })
console.log(`sandbox start cleanup: ${left} processes left, temp dir removed ${left === 0 ? 'PASS' : 'MISS'}`)
if (left > 0) process.exitCode = 1
