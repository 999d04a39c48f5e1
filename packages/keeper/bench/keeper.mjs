// What keeping a process costs (issue 33), each measure in the same run:
// 1. start latency: `/bin/sh -c 'exit 0'` launched through Node's spawn (`nodeSpawner`), LAUNCHES
//    times kept and LAUNCHES times bare, interleaved (the order alternating pair by pair, after
//    WARMUP pairs). Bare: the launch to the child's `exit`. Kept: `wrap`, the launch, `attach` and
//    the `KeptChild`'s `exit` (the keeper's EXIT line), its `close` (both files read, RELEASE)
//    awaited too. p50 and p99 of each, the ratio kept/bare (no target: it is what keeping costs);
//    the spread is the p50 ratio of each block of 50 pairs.
// 2. memory: KEPT `sleep 600` kept at once; each keeper's VmRSS (and Pss, its share of the pages
//    it shares with the other keepers) from /proc; target: under 1 MiB a keeper. Beside it, the
//    sleep's own VmRSS, and what this process grew by (RSS, heap after a GC) per kept process (its
//    KeptChild, its socket and its keeper's ChildProcess).
// 3. re-adoption: ADOPT `sleep 600` kept by a helper Node process (keep-many.mjs), which is then
//    killed with kill -9; the time from `new Keepers({root})` through `list()` to every
//    `adopt(dir)` resolved with its pid; target: under 5 s. Then every adopted process is killed
//    (SIGKILL to its pid), every KeptChild's `close` awaited, and every keeper must have gone.
// Every launch carries TOOLVISOR_KEEPER_BENCH=<temp dir> in its environment: at the end (and on a
// failure, or SIGINT) every process that carries it is killed and none may be left; the temp dir
// (mkdtemp, 0700) is removed. Exit 0 when a target is missed (read the MISS); 1 only when a
// process or the temp dir was left, or a run gave a wrong result.
// Run after a build: `pnpm --filter @toolvisor/keeper bench`. Knobs: BENCH_ITERATIONS (200),
// BENCH_WARMUP (20), BENCH_KEPT (100), BENCH_ADOPT (500).
import { spawn } from 'node:child_process'
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { nodeSpawner } from '@toolvisor/process-runtime'
import { Keepers } from '../dist/index.js'

const LAUNCHES = Number(process.env.BENCH_ITERATIONS ?? 200)
const WARMUP = Number(process.env.BENCH_WARMUP ?? 20)
const KEPT = Number(process.env.BENCH_KEPT ?? 100)
const ADOPT = Number(process.env.BENCH_ADOPT ?? 500)
const BLOCK = 50
const TARGET_KEEPER_KIB = 1024
const TARGET_ADOPT_MS = 5000
/** How long a keeper whose daemon is gone lives: a bound on what a bench killed with -9 could leave. */
const REAP_AFTER_MS = 60_000
/** Descriptors a kept process holds in the process that attached it (2 measured: its keeper's stdin, the socket), with room. */
const FDS_PER_KEPT = 3

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc')

const base = mkdtempSync(join(tmpdir(), 'tv-bench-keeper-'))
chmodSync(base, 0o700)
const MARK = `TOOLVISOR_KEEPER_BENCH=${base}`
const env = { PATH: '/usr/bin:/bin', TOOLVISOR_KEEPER_BENCH: base }
const trueLaunch = { file: '/bin/sh', args: ['-c', 'exit 0'], env, cwd: '/', extraFds: [] }
const sleepLaunch = { file: '/bin/sleep', args: ['600'], env, cwd: '/', extraFds: [] }

const rows = [] // the summary table: [measure, kept, baseline, ratio or target, verdict]
let wrong = false // a run gave a wrong result
let helper // the re-adoption's helper process, while it runs

// --- statistics and the report --------------------------------------------------------------

const since = (start) => Number(process.hrtime.bigint() - start) / 1e6
function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]
}
const mean = (values) => values.reduce((s, v) => s + v, 0) / values.length
const verdict = (ok) => (ok ? 'PASS' : 'MISS')
const ms = (value) => `${value.toFixed(2)} ms`
const kib = (value) => `${value.toFixed(0)} KiB`
const signed = (value) => `${value < 0 ? '' : '+'}${value.toFixed(1)}`

function table(header, body) {
  const all = [header, ...body]
  const widths = header.map((_, i) => Math.max(...all.map((row) => String(row[i]).length)))
  const line = (row) => `| ${row.map((cell, i) => String(cell).padEnd(widths[i])).join(' | ')} |`
  console.log(line(header))
  console.log(`| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`)
  for (const row of body) console.log(line(row))
}

// --- the processes of this run --------------------------------------------------------------

/** The processes (pids) alive now whose environment carries this run's mark. */
function marked() {
  const found = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      if (readFileSync(`/proc/${name}/environ`, 'latin1').split('\0').includes(MARK)) found.push(Number(name))
    } catch {
      // gone, or not ours
    }
  }
  return found
}

/** The state letter of `pid` (R, S, Z...), undefined once it is gone (reaped). */
function stateOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
  } catch {
    return undefined
  }
}
const alive = (pid) => {
  const state = stateOf(pid)
  return state !== undefined && state !== 'Z'
}

/** Kills (SIGKILL) every process of this run, the helper included; synchronous (an exit handler's). */
function killAll() {
  if (helper && helper.exitCode === null && helper.signalCode === null) helper.kill('SIGKILL')
  for (const pid of marked()) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // gone meanwhile
    }
  }
}

const sleep = (time) => new Promise((resolve) => setTimeout(resolve, time))
async function until(check, timeoutMs) {
  const deadline = Date.now() + timeoutMs
  while (!check() && Date.now() < deadline) await sleep(20)
  return check()
}

/** `kib` of a field of /proc/PID/status (VmRSS), or of smaps_rollup (Pss). */
function procKib(pid, file, field) {
  try {
    const text = readFileSync(`/proc/${pid}/${file}`, 'utf8')
    return Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1])
  } catch {
    return Number.NaN
  }
}

/** The soft limit `name` of /proc/self/limits (Infinity when unlimited). */
function softLimit(name) {
  const value = new RegExp(`^${name}\\s+(\\S+)`, 'm').exec(readFileSync('/proc/self/limits', 'utf8'))?.[1]
  return value === undefined || value === 'unlimited' ? Number.POSITIVE_INFINITY : Number(value)
}

/** The soft limits a mass start can run into, for the message when it did. */
const limits = () =>
  `max user processes ${softLimit('Max processes')}, open files ${softLimit('Max open files')}`

/** How many processes this uid runs now. */
function processesOfMine() {
  const uid = process.getuid()
  let n = 0
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      if (Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${name}/status`, 'utf8'))?.[1]) === uid) n++
    } catch {
      // gone
    }
  }
  return n
}

/**
 * Why `count` kept processes cannot be started here, or undefined. Checked first: out of
 * descriptors, `nodeSpawner.launch` can bring this very process down (see `spawnError`), so the
 * bench does not go there; out of processes (`ulimit -u`, not enforced for root) is checked too.
 */
function noRoom(count) {
  const files = softLimit('Max open files')
  const needFiles = readdirSync('/proc/self/fd').length + count * FDS_PER_KEPT + 64
  if (needFiles > files)
    return `open files soft limit ${files} (ulimit -n), about ${needFiles} needed: raise it, or lower the count`
  const procs = softLimit('Max processes')
  const needProcs = processesOfMine() + 2 * count + 32
  if (process.getuid() !== 0 && needProcs > procs)
    return `max user processes ${procs} (ulimit -u), about ${needProcs} needed with what runs now: raise it, or lower the count`
  return undefined
}

/** A start that ran into the machine's limits: reported as a MISS, saying so, not as a wrong result. */
class LimitError extends Error {}

/**
 * The last error a spawn emitted on its ChildProcess. Out of descriptors or processes, Node's spawn
 * emits `error` on the child a tick later, and `nodeSpawner.launch` throws a TypeError of its own
 * before anyone could listen (it wires the child's missing stdio): unhandled, that `error` would
 * end this process with everything it started still running. Kept here, it names the cause.
 */
let spawnError
process.on('uncaughtException', (error) => {
  if (error?.syscall?.startsWith('spawn')) {
    spawnError = error
    return
  }
  killAll()
  rmSync(base, { recursive: true, force: true })
  console.error(error)
  process.exit(1)
})

/** Why a mass start stopped; awaited a turn, so that the spawn's own `error` came first. */
async function startFailure(what, error, done) {
  await new Promise((resolve) => setImmediate(resolve))
  const cause = error.code !== undefined ? error : (spawnError ?? error)
  const code = cause.code ?? /\b(EAGAIN|EMFILE|ENFILE|ENOMEM)\b/.exec(error.message ?? '')?.[1]
  const hint =
    code === 'EAGAIN' || code === 'EMFILE' || code === 'ENFILE' || code === 'ENOMEM'
      ? ` (${code}: out of processes or descriptors; ${limits()}; raise them with ulimit -u / ulimit -n, or lower the count)`
      : ''
  const also = cause !== error && cause.message !== error.message ? ` (the spawn: ${cause.message})` : ''
  const message = `${what}: only ${done} started, then: ${error.message ?? error}${also}${hint}`
  return hint === '' ? new Error(message) : new LimitError(message)
}

// --- 1. start latency -----------------------------------------------------------------------

/** Launches `launch` once with Node's spawn; resolves with the ms from the launch to its exit. */
async function bareOnce() {
  const start = process.hrtime.bigint()
  const { child } = await nodeSpawner.launch(trueLaunch)
  child.stdout?.resume()
  child.stderr?.resume()
  const closed = new Promise((resolve) => child.once('close', resolve))
  const [code] = await new Promise((resolve, reject) => {
    child.once('exit', (...exit) => resolve(exit))
    child.once('error', reject)
  })
  const told = since(start)
  child.stdin?.destroy()
  await closed
  if (code !== 0) throw new Error(`bare /bin/sh exited ${code}`)
  return told
}

/** The same launch kept: [ms to the KeptChild's exit, ms to its close]. */
async function keptOnce(keepers) {
  const start = process.hrtime.bigint()
  const kept = keepers.wrap(trueLaunch)
  const { child: keeper } = await nodeSpawner.launch(kept.launch)
  const keeperGone = new Promise((resolve) => keeper.once('exit', resolve))
  const child = await kept.attach(keeper.stdout, keeper.stderr)
  child.stdout.resume()
  child.stderr.resume()
  const exited = new Promise((resolve) =>
    child.once('exit', (code, signal) => resolve([since(start), code, signal])),
  )
  const closed = new Promise((resolve) => child.once('close', () => resolve(since(start))))
  const [[told, code, signal], released] = await Promise.all([exited, closed])
  keeper.stdin?.destroy()
  const keeperCode = await keeperGone
  if (code !== 0 || signal !== null) throw new Error(`kept /bin/sh exited ${code} ${signal}`)
  if (keeperCode !== 0) throw new Error(`its keeper exited ${keeperCode}`)
  if (existsSync(kept.dir)) throw new Error(`${kept.dir} is left after the release`)
  return [told, released]
}

async function startLatency(keepers) {
  for (let i = 0; i < WARMUP; i++) {
    await bareOnce()
    await keptOnce(keepers)
  }
  const bare = []
  const kept = []
  const released = []
  for (let i = 0; i < LAUNCHES; i++) {
    const sides = [
      async () => bare.push(await bareOnce()),
      async () => {
        const [told, close] = await keptOnce(keepers)
        kept.push(told)
        released.push(close)
      },
    ]
    if (i % 2 === 1) sides.reverse()
    for (const side of sides) await side()
  }
  const blocks = []
  for (let from = 0; from + BLOCK <= LAUNCHES; from += BLOCK)
    blocks.push(
      percentile(kept.slice(from, from + BLOCK), 50) / percentile(bare.slice(from, from + BLOCK), 50),
    )
  const [k50, k99, b50, b99] = [
    percentile(kept, 50),
    percentile(kept, 99),
    percentile(bare, 50),
    percentile(bare, 99),
  ]
  const spread =
    blocks.length > 1
      ? `, p50 ratio of each block of ${BLOCK}: ${Math.min(...blocks).toFixed(2)} to ${Math.max(...blocks).toFixed(2)}`
      : ''
  console.log(
    `start latency, /bin/sh -c 'exit 0' to exit told, ${LAUNCHES} each, interleaved: kept p50 ${ms(k50)}, p99 ${ms(k99)}; ` +
      `bare p50 ${ms(b50)}, p99 ${ms(b99)}; ratio p50 ${(k50 / b50).toFixed(2)}, p99 ${(k99 / b99).toFixed(2)}${spread} (no target)`,
  )
  console.log(
    `  kept, to close (both files read, RELEASE sent): p50 ${ms(percentile(released, 50))}, p99 ${ms(percentile(released, 99))}`,
  )
  rows.push(['start to exit told, p50', ms(k50), ms(b50), `ratio ${(k50 / b50).toFixed(2)}`, '(no target)'])
  rows.push(['start to exit told, p99', ms(k99), ms(b99), `ratio ${(k99 / b99).toFixed(2)}`, '(no target)'])
  rows.push(['start to close (kept), p50', ms(percentile(released, 50)), '', '', '(no target)'])
}

// --- 2. memory ------------------------------------------------------------------------------

/** Kills each child's process and resolves once every KeptChild closed and every keeper went. */
async function endAll(children, keeperPids) {
  const closed = children.map((child) => {
    child.stdout.resume()
    child.stderr.resume()
    return new Promise((resolve) => child.once('close', resolve))
  })
  for (const child of children) process.kill(child.pid, 'SIGKILL')
  let timer
  const timeout = new Promise((resolve) => {
    timer = setTimeout(() => resolve('timeout'), 30_000)
  })
  const all = await Promise.race([Promise.all(closed), timeout])
  clearTimeout(timer)
  if (all === 'timeout') throw new Error('not every kept child closed within 30 s of its SIGKILL')
  const gone = await until(() => keeperPids.every((pid) => !alive(pid)), 10_000)
  if (!gone) throw new Error(`${keeperPids.filter(alive).length} keepers still run after their release`)
}

async function memory(keepers) {
  const node = () => {
    gc()
    const { rss, heapUsed } = process.memoryUsage()
    return { rss: rss / 1024, heap: heapUsed / 1024 }
  }
  const full = noRoom(KEPT)
  if (full !== undefined) throw new LimitError(`${KEPT} kept sleep 600 not started: ${full}`)
  const before = node()
  const children = []
  const keeperPids = []
  const spawned = []
  try {
    for (let i = 0; i < KEPT; i++) {
      const kept = keepers.wrap(sleepLaunch)
      const launched = await nodeSpawner.launch(kept.launch)
      keeperPids.push(launched.child.pid)
      spawned.push(launched)
      children.push(await kept.attach(launched.child.stdout, launched.child.stderr))
    }
  } catch (error) {
    throw await startFailure(`${KEPT} kept sleep 600`, error, children.length)
  }
  await sleep(200) // every keeper in its loop, every sleep exec'd
  const after = node()
  const rss = keeperPids.map((pid) => procKib(pid, 'status', 'VmRSS'))
  const pss = keeperPids.map((pid) => procKib(pid, 'smaps_rollup', 'Pss'))
  const sleeps = children.map((child) => procKib(child.pid, 'status', 'VmRSS'))
  if ([...rss, ...sleeps].some(Number.isNaN)) {
    wrong = true
    console.log('memory: a keeper or its sleep was gone before it was measured')
  }
  const meanRss = mean(rss)
  const maxRss = Math.max(...rss)
  const ok = maxRss < TARGET_KEEPER_KIB
  console.log(
    `memory, ${KEPT} kept sleep 600: keeper VmRSS mean ${kib(meanRss)}, max ${kib(maxRss)} ` +
      `(target under ${TARGET_KEEPER_KIB} KiB each) ${verdict(ok)}; keeper Pss mean ${kib(mean(pss))}; ` +
      `the sleep itself VmRSS mean ${kib(mean(sleeps))} (ratio keeper/sleep ${(meanRss / mean(sleeps)).toFixed(2)})`,
  )
  const rssEach = (after.rss - before.rss) / KEPT
  const heapEach = (after.heap - before.heap) / KEPT
  console.log(
    `  this process per kept process attached (KeptChild, socket, the keeper's ChildProcess): heap ${signed(heapEach)} KiB, ` +
      `RSS ${signed(rssEach)} KiB (after a GC; in all heap ${signed(after.heap - before.heap)} KiB, RSS ${signed(after.rss - before.rss)} KiB, ` +
      'the RSS within what a GC moves it by; no target)',
  )
  rows.push(['keeper VmRSS, mean', kib(meanRss), `sleep ${kib(mean(sleeps))}`, 'max < 1024 KiB', verdict(ok)])
  rows.push(['keeper VmRSS, max', kib(maxRss), '', '', ''])
  rows.push(['keeper Pss, mean', kib(mean(pss)), '', '', ''])
  rows.push([
    'daemon heap / RSS per kept',
    `${signed(heapEach)} / ${signed(rssEach)} KiB`,
    '',
    '',
    '(no target)',
  ])
  const start = process.hrtime.bigint()
  await endAll(children, keeperPids)
  console.log(`  ${KEPT} ended (SIGKILL, close awaited, keepers gone) in ${since(start).toFixed(0)} ms`)
}

// --- 3. re-adoption -------------------------------------------------------------------------

async function readoption() {
  const root = join(base, 'adopt')
  const script = fileURLToPath(new URL('keep-many.mjs', import.meta.url))
  // The helper holds as many descriptors as this process will once it adopted them all.
  const full = noRoom(ADOPT)
  if (full !== undefined) throw new LimitError(`${ADOPT} kept sleep 600 not started: ${full}`)
  const config = { root, count: ADOPT, concurrency: 16, ...sleepLaunch, reapAfterMs: REAP_AFTER_MS }
  // Its stdin is this process: when it ends (this process gone), the helper ends what it kept.
  helper = spawn(process.execPath, [script, JSON.stringify(config)], { stdio: ['pipe', 'pipe', 'inherit'] })
  helper.stdin.on('error', () => {})
  const helperGone = new Promise((resolve) => helper.once('exit', (code, signal) => resolve(signal ?? code)))
  const line = await Promise.race([
    new Promise((resolve) => createInterface({ input: helper.stdout }).once('line', resolve)),
    helperGone.then(() => undefined),
  ])
  if (line === undefined) {
    const how = await helperGone
    const message = `the helper ended (${how}) before it said what it kept; ${limits()}`
    // Out of descriptors or processes, Node's spawn through nodeSpawner aborts the process (libuv).
    if (how === 'SIGABRT') throw new LimitError(`${message}: out of descriptors or processes?`)
    throw new Error(message)
  }
  const said = JSON.parse(line)
  helper.kill('SIGKILL')
  await helperGone
  if (said.error !== undefined)
    throw await startFailure(`${ADOPT} kept sleep 600 (helper)`, said, said.pids.length)
  console.log(
    `re-adoption: ${ADOPT} kept sleep 600 started by the helper in ${said.ms.toFixed(0)} ms; helper killed (kill -9)`,
  )

  const start = process.hrtime.bigint()
  const keepers = new Keepers({ root })
  const dirs = keepers.list()
  const settled = await Promise.allSettled(dirs.map((dir) => keepers.adopt(dir)))
  const took = since(start)
  const children = settled.filter((s) => s.status === 'fulfilled').map((s) => s.value)
  const failed = settled.filter((s) => s.status === 'rejected')
  const pids = new Set(said.pids)
  const right =
    dirs.length === ADOPT &&
    failed.length === 0 &&
    children.every((child) => pids.has(child.pid)) &&
    new Set(children.map((child) => child.pid)).size === ADOPT
  if (!right) {
    wrong = true
    console.log(
      `re-adoption: WRONG: ${dirs.length} directories listed, ${children.length} adopted, ${failed.length} failed` +
        (failed.length > 0 ? ` (first: ${failed[0].reason.message})` : ''),
    )
  }
  const ok = right && took < TARGET_ADOPT_MS
  console.log(
    `re-adoption of ${ADOPT}: list() + adopt() of each until every pid resolved: ${took.toFixed(0)} ms ` +
      `(${((took * 1000) / ADOPT).toFixed(0)} us each; target under ${TARGET_ADOPT_MS} ms) ${verdict(ok)}`,
  )
  rows.push([
    `re-adopt ${ADOPT} (list + adopt)`,
    `${took.toFixed(0)} ms`,
    '',
    `< ${TARGET_ADOPT_MS} ms`,
    verdict(ok),
  ])
  const ending = process.hrtime.bigint()
  await endAll(children, said.keepers)
  const ended = since(ending)
  console.log(
    `  ${children.length} adopted ended (SIGKILL, close awaited, keepers gone) in ${ended.toFixed(0)} ms`,
  )
  rows.push([`end ${ADOPT} adopted`, `${ended.toFixed(0)} ms`, '', '', '(no target)'])
}

// --- the run --------------------------------------------------------------------------------

const interrupted = (signal) => {
  killAll()
  rmSync(base, { recursive: true, force: true })
  process.exit(signal === 'SIGINT' ? 130 : 143)
}
process.once('SIGINT', interrupted)
process.once('SIGTERM', interrupted)

console.log(`launch path: Node's spawn (nodeSpawner); state root ${base}`)
try {
  const keepers = new Keepers({ root: join(base, 'keep'), reapAfterMs: REAP_AFTER_MS })
  for (const [name, measure] of [
    ['start latency', () => startLatency(keepers)],
    ['memory', () => memory(keepers)],
    ['re-adoption', readoption],
  ]) {
    try {
      await measure()
    } catch (error) {
      // Out of processes or descriptors is this machine's limit, said as such; anything else is wrong.
      if (!(error instanceof LimitError)) wrong = true
      console.log(`${name}: ${error instanceof LimitError ? 'NOT MEASURED' : 'FAILED'}: ${error.message}`)
      rows.push([name, error instanceof LimitError ? 'not measured (limits)' : 'failed', '', '', 'MISS'])
      // What the failed measure had started goes before the next one starts.
      killAll()
      await until(() => marked().length === 0, 5000)
    }
  }
} finally {
  // Whatever is still marked (nothing, when every measure ended its processes) is killed.
  const leftBefore = marked()
  killAll()
  const left = (await until(() => marked().length === 0, 5000)) ? [] : marked()
  // The keepers by their command line too (--dir under the temp dir), the helper with them.
  const named = readdirSync('/proc').filter((name) => {
    if (!/^\d+$/.test(name)) return false
    try {
      return readFileSync(`/proc/${name}/cmdline`, 'latin1').includes(base)
    } catch {
      return false
    }
  })
  rmSync(base, { recursive: true, force: true })
  const removed = !existsSync(base)
  console.log()
  table(['measure', 'kept', 'baseline', 'ratio / target', 'result'], rows)
  console.log()
  const clean = leftBefore.length === 0 && left.length === 0 && named.length === 0 && removed
  console.log(
    `keeper cleanup: ${leftBefore.length} processes of this run alive after the measures` +
      `${leftBefore.length > 0 ? ` (killed; ${left.length} still alive)` : ''}, ` +
      `${named.length} with the temp dir on their command line, temp dir ${removed ? 'removed' : 'LEFT'} ${clean ? 'PASS' : 'MISS'}`,
  )
  if (!clean || wrong) process.exitCode = 1
}
