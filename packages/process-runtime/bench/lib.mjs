// Shared pieces of the process-runtime benchmarks: a runtime in a temp state dir that cleans up
// after itself, the report line, and a few statistics.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createLaunchers, markedProcesses, Runtime } from '../dist/index.js'

export const here = dirname(fileURLToPath(import.meta.url))
export const producers = join(here, 'producers')

/**
 * The launch path the benchmarks run on: Node's spawn, this package's default; with
 * `BENCH_SPAWNER=native` (launch-native's `pnpm bench` runs them so) the fork server of
 * `@toolvisor/launch-native`, from the workspace (a bench-time import, not a dependency).
 */
export const launchPath = process.env.BENCH_SPAWNER === 'native' ? 'native' : 'node'
const spawner =
  launchPath === 'native'
    ? (await import(new URL('../../launch-native/dist/index.js', import.meta.url).href)).nativeSpawner()
    : undefined
console.log(
  `launch path: ${launchPath === 'native' ? "launch-native's fork server" : "Node's spawn (no launch-native)"}`,
)

/** A runtime whose state dir (run records, spill files) lives in a fresh temp dir. */
export function benchRuntime(options = {}) {
  const root = mkdtempSync(join(tmpdir(), 'tv-bench-'))
  const runtime = new Runtime(
    { ...(spawner ? { spawner } : {}), ...options, stateDir: join(root, 'state') },
    createLaunchers(),
  )
  return { runtime, root }
}

/**
 * Disposes the runtime, waits up to 2 s for every process it started to be gone, removes the temp
 * dir (spill files included), prints the cleanup line and returns how many processes were left.
 */
export async function cleanup(name, runtime, root) {
  await runtime.dispose()
  const deadline = Date.now() + 2000
  while (markedProcesses(runtime.runId).length > 0 && Date.now() < deadline) await sleep(20)
  const left = markedProcesses(runtime.runId)
  rmSync(root, { recursive: true, force: true })
  console.log(
    `${name} cleanup: ${left.length} processes left, temp dir removed ${verdict(left.length === 0)}`,
  )
  if (left.length > 0) process.exitCode = 1
  return left.length
}

/** A prepared tool built directly, as `runtime.prepare` would give for a tool with no declarations. */
export function preparedTool(path, process) {
  return {
    path,
    dir: dirname(path),
    name: path.split('/').pop(),
    process: {
      digest: { per: 'round' },
      ready: process.mode === 'oneshot' ? { kind: 'exit' } : { kind: 'immediate' },
      ...process,
    },
    runtime: { environment: {}, timeout: {}, onExit: 'report', cancel: { signal: 'SIGTERM' } },
  }
}

export function verdict(ok) {
  return ok ? 'PASS' : 'MISS'
}

/**
 * Prints one measure: `<measure>: toolvisor X, baseline Y, ratio R (target OP T) PASS|MISS`.
 * `higherIsBetter` picks `>=` (throughput) or `<=` (latency, memory). The ratio is toolvisor over
 * baseline unless `ratio` is given (a median of paired rounds). A target that is not on the ratio
 * (memory growth) comes as a label in `target` with its verdict in `ok`.
 */
export function report(measure, options) {
  const { toolvisor, baseline, unit, target, higherIsBetter = false, digits = 2 } = options
  const ratio = options.ratio ?? toolvisor / baseline
  const op = higherIsBetter ? '>=' : '<='
  const ok = options.ok ?? (higherIsBetter ? ratio >= target : ratio <= target)
  console.log(
    `${measure}: toolvisor ${toolvisor.toFixed(digits)} ${unit}, baseline ${baseline.toFixed(digits)} ${unit}, ` +
      `ratio ${ratio.toFixed(2)} (target ${op} ${target}) ${verdict(ok)}`,
  )
  return ok
}

/** Prints the RSS growth of the toolvisor side against the baseline's, with its absolute target. */
export function reportGrowth(measure, toolvisor, baseline, targetMb) {
  return report(measure, {
    toolvisor: toolvisor.growth,
    baseline: baseline.growth,
    unit: 'MB',
    target: `${targetMb} MB of growth`,
    ok: toolvisor.growth <= targetMb,
    digits: 1,
  })
}

/**
 * Runs `count` rounds of every side of `sides` (each resolves to a rate), the order rotating each
 * round (ABC, BCA, CAB, ...), so that slow drift of the machine hits every side alike. Returns the
 * rates of each side, round by round.
 */
export async function rotate(count, sides, describe = (rate) => rate.toFixed(2)) {
  const names = Object.keys(sides)
  const rates = Object.fromEntries(names.map((name) => [name, []]))
  for (let round = 0; round < count; round++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(round + i) % names.length]
      rates[name].push(await sides[name]())
    }
    if (process.env.BENCH_VERBOSE)
      console.log(`  round ${round + 1}: ${names.map((n) => `${n} ${describe(rates[n].at(-1))}`).join(', ')}`)
  }
  return rates
}

/** The median of the per-round ratios of two sides' rates (runs made back to back). */
export function pairedRatio(over, under) {
  return median(over.map((rate, i) => rate / under[i]))
}

/**
 * Runs `rounds` pairs of `toolvisor()` and `baseline()` (each resolves to a rate), alternating
 * which goes first (AB, BA, AB, ...). Returns both lists of rates and the ratio of each pair
 * (toolvisor over baseline, run back to back).
 */
export async function alternate(rounds, toolvisor, baseline, describe = (rate) => rate.toFixed(2)) {
  const rates = await rotate(rounds, { toolvisor, baseline }, describe)
  return { ...rates, ratios: rates.toolvisor.map((rate, i) => rate / rates.baseline[i]) }
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

export function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]
}

export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/** Milliseconds since `start` (a `process.hrtime.bigint()`). */
export function since(start) {
  return Number(process.hrtime.bigint() - start) / 1e6
}

/**
 * The baseline's line splitter: the naive loop a harness would write by hand (one `toString` per
 * line), shared by the jsonl and memory benchmarks. Returns a `data` handler that calls `take` with
 * each complete line.
 */
export function splitLines(take) {
  // The pieces of a line that spans chunks, joined once at its end (not chunk by chunk: a 10 MiB
  // line would cost quadratic copies).
  let pending = []
  return (chunk) => {
    let from = 0
    if (pending.length > 0) {
      const newline = chunk.indexOf(10)
      if (newline === -1) {
        pending.push(chunk)
        return
      }
      pending.push(chunk.subarray(0, newline))
      take(Buffer.concat(pending).toString('utf8'))
      pending = []
      from = newline + 1
    }
    for (;;) {
      const newline = chunk.indexOf(10, from)
      if (newline === -1) break
      take(chunk.toString('utf8', from, newline))
      from = newline + 1
    }
    if (from < chunk.length) pending.push(chunk.subarray(from))
  }
}

/** VmRSS of `pid` in MB (undefined once it is gone). */
export function rssMB(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1])
    return Number.isFinite(kb) ? kb / 1024 : undefined
  } catch {
    return undefined
  }
}

/** Least-squares slope of RSS over time (MB/s). */
export function slope(samples) {
  const n = samples.length
  if (n < 2) return 0
  const mt = samples.reduce((s, p) => s + p.t, 0) / n
  const mr = samples.reduce((s, p) => s + p.rss, 0) / n
  let num = 0
  let den = 0
  for (const p of samples) {
    num += (p.t - mt) * (p.rss - mr)
    den += (p.t - mt) ** 2
  }
  return den === 0 ? 0 : num / den
}

/**
 * Samples the VmRSS of a child that tells its phases as JSON lines on stdout (`{"phase":"start"}`,
 * then `{"phase":"end", ...}`) every `sampleMs` between the two. Other lines are kept as notes.
 * Resolves once the child closed: the samples (`t` in s since start), the end message (with its
 * RSS and time), the notes and the exit code.
 */
export async function sampleRss(child, sampleMs) {
  const samples = []
  const notes = []
  let started
  let ended
  let buffered = ''
  child.stdout.setEncoding('utf8')
  child.stdout.on('data', (text) => {
    buffered += text
    let newline = buffered.indexOf('\n')
    while (newline !== -1) {
      const line = buffered.slice(0, newline)
      buffered = buffered.slice(newline + 1)
      newline = buffered.indexOf('\n')
      if (!line.startsWith('{')) {
        notes.push(line) // a child's cleanup line
        continue
      }
      const message = JSON.parse(line)
      const rss = rssMB(child.pid)
      if (message.phase === 'start') {
        started = performance.now()
        samples.push({ t: 0, rss })
      } else if (message.phase === 'end') {
        ended = { ...message, rss, t: (performance.now() - started) / 1000 }
      }
    }
  })
  const closed = new Promise((resolve) => child.on('close', resolve))
  while (ended === undefined && child.exitCode === null) {
    await sleep(sampleMs)
    if (started === undefined || ended !== undefined) continue
    const rss = rssMB(child.pid)
    if (rss !== undefined) samples.push({ t: (performance.now() - started) / 1000, rss })
  }
  const code = await closed
  return { samples, notes, ended, code }
}
