// What a cgroup per launch costs (decision 0097), and that it leaves nothing behind.
// 1. A oneshot `/usr/bin/true`, start to exit resolved, in a runtime with cgroups (the default)
//    against one with `cgroup: false`, interleaved (AB, BA, ...) so drift hits both alike: p50 and
//    p99 of each side, and of the per-round difference. Twice: back to back, and with a pause of
//    GAP_MS (5) untimed before each call, as an agent's calls come (the kernel then takes a cgroup
//    migration's lock the slow way: an RCU grace period each, see decision 0097). Target: under
//    0.3 ms at p50, both ways.
// 2. 500 `sleep 300` (stream) with cgroups, at once (in batches of 50 when the fork server says
//    busy): a leaf cgroup each (500 in the member hierarchy, and one made ahead for the next launch;
//    the v1 cpu one only with a cpu limit),
//    then all stopped and the runtime disposed: no process and no cgroup directory of the run left.
// Run after a build: `node bench/cgroup-launch.mjs` (RUNS: rounds per side, default 300).
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import {
  benchRuntime,
  cleanup,
  median,
  percentile,
  rotate,
  since,
  sleep,
} from '../../process-runtime/bench/lib.mjs'
import { nativeSpawner } from '../dist/index.js'

/** Every runtime here launches through the fork server: only it places a launch in its cgroups. */
const spawner = nativeSpawner()

const RUNS = Number(process.env.RUNS ?? 300)
const WARMUP = 20
const TARGET_MS = 0.3
const SLEEPERS = Number(process.env.BENCH_SLEEPERS ?? 500)
const BATCH = 50
const GAP_MS = Number(process.env.GAP_MS ?? 5)

const ms = (value) => `${value.toFixed(3)} ms`

/** The cgroup hierarchies a runtime puts its launches in (empty when it has none). */
function hierarchies(runtime) {
  const cgroup = runtime.launchFacts().containment.cgroup
  return cgroup.available ? cgroup.hierarchies : []
}

/** Milliseconds from start to exit resolved of one `/usr/bin/true`; checks it was accounted as expected. */
async function oneshot(runtime, tool, accounted) {
  const start = process.hrtime.bigint()
  const exit = await runtime.start({ tool, argv: [] }).exit
  const took = since(start)
  if (exit.code !== 0) throw new Error(`true exited ${JSON.stringify(exit)}`)
  // Its spill's size is told either way; what a cgroup accounts for only with one.
  const fromCgroup = Object.keys(exit.usage ?? {}).some((key) => key !== 'spillBytes')
  if (fromCgroup !== accounted)
    throw new Error(`usage ${accounted ? 'missing' : 'present'} without a cgroup: ${JSON.stringify(exit)}`)
  return took
}

async function latency(gapMs) {
  const withCg = benchRuntime({ spawner })
  const without = benchRuntime({ spawner, cgroup: false })
  try {
    if (hierarchies(withCg.runtime).length === 0)
      throw new Error(`no cgroups here: ${withCg.runtime.launchFacts().containment.cgroup.reason}`)
    const tools = await Promise.all(
      [withCg, without].map(({ runtime }) => runtime.preparePlain({ name: 'true', file: '/usr/bin/true' })),
    )
    const pause = () => (gapMs > 0 ? sleep(gapMs) : undefined)
    // This process's CPU time (its event loop and its threads) in each side's launches.
    const cpu = { cgroup: [], none: [] }
    const timed = async (side, runtime, tool, accounted) => {
      await pause()
      const before = process.cpuUsage()
      const took = await oneshot(runtime, tool, accounted)
      const used = process.cpuUsage(before)
      cpu[side].push((used.user + used.system) / 1000)
      return took
    }
    const sides = {
      cgroup: () => timed('cgroup', withCg.runtime, tools[0], true),
      none: () => timed('none', without.runtime, tools[1], false),
    }
    await rotate(WARMUP, sides)
    cpu.cgroup.length = 0
    cpu.none.length = 0
    const rounds = await rotate(RUNS, sides)
    const diffs = rounds.cgroup.map((took, i) => took - rounds.none[i])
    const line = (values) => `p50 ${ms(median(values))}, p99 ${ms(percentile(values, 99))}`
    const how = gapMs > 0 ? `${gapMs} ms apart (untimed)` : 'back to back'
    console.log(
      `oneshot /usr/bin/true, start to exit, ${how} (${RUNS} runs per side, interleaved, ${WARMUP} warm-up):`,
    )
    console.log(`  with a cgroup per launch: ${line(rounds.cgroup)}`)
    console.log(`  without (cgroup: false):  ${line(rounds.none)}`)
    console.log(`  difference per round:     ${line(diffs)}`)
    const cpuOf = (side) => median(cpu[side])
    console.log(
      `  toolvisor's own CPU per launch (p50): ${ms(cpuOf('cgroup'))} with, ${ms(cpuOf('none'))} without (ratio ${(cpuOf('cgroup') / cpuOf('none')).toFixed(2)})`,
    )
    const diff = median(diffs)
    console.log(
      `target: cgroup per launch under ${TARGET_MS} ms at p50, ${how}: ${diff < TARGET_MS ? 'PASS' : 'FAIL'} (difference ${ms(diff)})`,
    )
  } finally {
    await cleanup('cgroup latency (with)', withCg.runtime, withCg.root)
    await cleanup('cgroup latency (without)', without.runtime, without.root)
  }
}

/** Subdirectories of `dir` (undefined when it does not exist). */
function subdirs(dir) {
  try {
    return readdirSync(dir, { withFileTypes: true }).filter((entry) => entry.isDirectory()).length
  } catch (error) {
    if (error.code === 'ENOENT') return undefined
    throw error
  }
}

/** Live `sleep 300`s whose cgroup (any hierarchy) is below the run's. */
function sleepersOf(runId) {
  const found = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8') !== 'sleep\u0000300\u0000') continue
      if (readFileSync(`/proc/${name}/cgroup`, 'utf8').includes(`/${runId}/`)) found.push(Number(name))
    } catch {
      // gone meanwhile
    }
  }
  return found
}

/** Starts `count` sleepers, all at once or in batches, until one fails to launch (then its error). */
async function startAll(runtime, tool, count, batch) {
  const started = []
  while (started.length < count) {
    const wave = Array.from({ length: Math.min(batch, count - started.length) }, () =>
      runtime.start({ tool, argv: ['300'] }),
    )
    started.push(...wave)
    await Promise.all(wave.map((p) => p.launched)) // never rejects: a failed launch has no pid
    const failed = wave.find((p) => p.pid === undefined)
    if (failed !== undefined) return { started, error: new Error((await failed.exit).why) }
  }
  return { started }
}

async function manySleepers() {
  const { runtime, root } = benchRuntime({ spawner })
  const { runId } = runtime
  const dirs = hierarchies(runtime).map((hierarchy) => join(hierarchy.base, runId))
  let marked = 0
  try {
    const tool = await runtime.preparePlain({ name: 'sleep', file: '/bin/sleep', mode: 'stream' })
    let batch = SLEEPERS
    let start = process.hrtime.bigint()
    let run = await startAll(runtime, tool, SLEEPERS, batch)
    if (run.error !== undefined && /already waiting/.test(run.error.message)) {
      console.log(`  ${SLEEPERS} at once: fork server busy; again in batches of ${BATCH}`)
      await Promise.all(run.started.map((p) => p.stop()))
      batch = BATCH
      start = process.hrtime.bigint()
      run = await startAll(runtime, tool, SLEEPERS, batch)
    }
    if (run.error !== undefined) throw run.error
    const startMs = since(start)
    const leaves = dirs.map(subdirs)
    const stopStart = process.hrtime.bigint()
    await Promise.all(run.started.map((p) => p.stop()))
    const stopMs = since(stopStart)
    const how = batch >= SLEEPERS ? 'all at once' : `in batches of ${batch}`
    console.log(`${SLEEPERS} concurrent sleep 300 (stream) with cgroups, started ${how}:`)
    const bases = hierarchies(runtime).map((hierarchy) => hierarchy.base)
    console.log(
      `  leaf cgroups in <base>/${runId}: ${bases.map((base, i) => `${base} ${leaves[i] ?? 'missing'}`).join(', ')}`,
    )
    // The member hierarchy holds every launch (and the one made ahead for the next launch); the
    // v1 cpu one only those with a cpu limit.
    if (leaves[0] !== SLEEPERS && leaves[0] !== SLEEPERS + 1) {
      console.log(`  leaf cgroups: expected ${SLEEPERS} (and one made ahead) in ${dirs[0]} MISS`)
      process.exitCode = 1
    }
    console.log(
      `  time to start all (all launched): ${startMs.toFixed(0)} ms (${(startMs / SLEEPERS).toFixed(2)} ms each)`,
    )
    console.log(`  time to stop all: ${stopMs.toFixed(0)} ms (${(stopMs / SLEEPERS).toFixed(2)} ms each)`)
  } finally {
    marked = await cleanup('cgroup sleepers', runtime, root)
  }
  // The run's directories may take a moment after dispose (a tree removed once its last process is reaped).
  const deadline = Date.now() + 2000
  const leftovers = () => [
    ...sleepersOf(runId).map((pid) => `pid ${pid}`),
    ...dirs.filter((dir) => subdirs(dir) !== undefined),
  ]
  while (leftovers().length > 0 && Date.now() < deadline) await sleep(20)
  const left = leftovers()
  const ok = left.length === 0 && marked === 0
  console.log(`  nothing left: ${ok ? 'yes' : 'no'}${left.length > 0 ? ` (${left.join(', ')})` : ''}`)
  if (!ok) process.exitCode = 1
}

await latency(0)
await latency(GAP_MS)
await manySleepers()
