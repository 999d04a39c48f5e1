// Keystrokes on a terminal (issue 31): how long one keystroke takes to come back as the terminal's
// echo, through toolvisor (the runtime's process on the fork server's terminal, `terminal.type`
// to its output event, the screen attached as the bash tools attach it) against a bare PTY in the
// same run (util-linux `script` relaying the same `cat` from a pipe: the pseudo-terminal and one
// relay, nothing of toolvisor). Rounds alternate between the two sides. Target: p50 and p99
// within 1.2x.
// Then `yes` on a terminal for 10 s with the screen attached: the RSS of the process running
// toolvisor against a bare node reading `yes` through `script`. Target: growth <= 64 MB.
// Run after `pnpm --filter @toolvisor/terminal... build`: `node bench/echo.mjs`.
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import {
  benchRuntime,
  cleanup,
  percentile,
  preparedTool,
  report,
  reportGrowth,
  sampleRss,
  sleep,
} from '../../process-runtime/bench/lib.mjs'

const KEYS = Number(process.env.BENCH_KEYS ?? 2000)
const ROUNDS = 5
const FLOOD_SECONDS = Number(process.env.BENCH_FLOOD_SECONDS ?? 10)
const TARGET = 1.2
const TARGET_MB = 64
const LETTERS = 'abcdefghijklmnopqrstuvwxyz'

/** Times `count` keystrokes: each is written once the previous one's echo came back. */
async function timeKeys(write, onOutput, count) {
  const times = []
  let waiting
  let seen = ''
  onOutput((text) => {
    seen += text
    if (waiting && seen.includes(waiting.letter)) {
      const done = waiting
      waiting = undefined
      seen = ''
      done.resolve(performance.now() - done.at)
    }
  })
  for (let i = 0; i < count; i++) {
    const letter = LETTERS[i % LETTERS.length]
    const echoed = new Promise((resolve) => {
      waiting = { letter, at: performance.now(), resolve }
    })
    write(letter)
    times.push(await echoed)
  }
  return times
}

/** A bare PTY: `script` runs `cat` on a pseudo-terminal of its own, fed and read through pipes. */
async function bareRound(count) {
  const child = spawn('script', ['-qfc', 'stty -icanon; cat', '/dev/null'], {
    stdio: ['pipe', 'pipe', 'ignore'],
    env: { PATH: process.env.PATH, TERM: 'xterm-256color' },
  })
  child.stdout.setEncoding('utf8')
  let listener = () => {}
  child.stdout.on('data', (text) => listener(text))
  // Ready once its terminal answers a first key.
  await timeKeys(
    (key) => child.stdin.write(key),
    (l) => (listener = l),
    1,
  )
  const times = await timeKeys(
    (key) => child.stdin.write(key),
    (l) => (listener = l),
    count,
  )
  child.kill('SIGKILL')
  await new Promise((resolve) => child.on('close', resolve))
  return times
}

/** toolvisor: the same `cat` as a runtime process on the fork server's terminal, its screen attached. */
async function toolvisorRound(runtime, TerminalSession, count) {
  const cat = preparedTool('/bin/sh', { mode: 'stream', output: { framing: 'chunks' } })
  const process = runtime.start({
    tool: cat,
    argv: ['-c', 'stty -icanon; exec cat'],
    env: { TERM: 'xterm-256color' },
    terminal: { columns: 80, rows: 24 },
  })
  TerminalSession.of(process)
  let listener = () => {}
  process.output.onEvent((event) => listener(event.value.toString('utf8')))
  const write = (key) => void process.terminal.type(key)
  await timeKeys(write, (l) => (listener = l), 1)
  const times = await timeKeys(write, (l) => (listener = l), count)
  await process.stop({ force: true })
  return times
}

async function echo() {
  const { runtime, root } = benchRuntime()
  const { TerminalSession } = await import('../dist/index.js')
  const ours = []
  const bare = []
  for (let round = 0; round < ROUNDS; round++) {
    const a = await toolvisorRound(runtime, TerminalSession, KEYS)
    const b = await bareRound(KEYS)
    ours.push(...a)
    bare.push(...b)
    console.log(
      `  round ${round + 1}: p50 ${percentile(a, 50).toFixed(3)} ms against ${percentile(b, 50).toFixed(3)} ms bare`,
    )
  }
  const p50 = report('keystroke echo p50', {
    toolvisor: percentile(ours, 50),
    baseline: percentile(bare, 50),
    unit: 'ms',
    target: TARGET,
    digits: 3,
  })
  const p99 = report('keystroke echo p99', {
    toolvisor: percentile(ours, 99),
    baseline: percentile(bare, 99),
    unit: 'ms',
    target: TARGET,
    digits: 3,
  })
  await cleanup('echo', runtime, root)
  return p50 && p99
}

function tell(message) {
  process.stdout.write(`${JSON.stringify(message)}\n`)
}

/** The flood's toolvisor side: `yes` on a terminal for FLOOD_SECONDS, its screen attached and read. */
async function floodToolvisor() {
  const { runtime, root } = benchRuntime()
  const { TerminalSession } = await import('../dist/index.js')
  const yes = preparedTool('/usr/bin/yes', { mode: 'stream', output: { framing: 'chunks' } })
  globalThis.gc?.()
  tell({ phase: 'start' })
  const process = runtime.start({ tool: yes, argv: [], terminal: { columns: 80, rows: 24 }, resultBytes: 0 })
  const session = TerminalSession.of(process)
  const until = Date.now() + FLOOD_SECONDS * 1000
  let screens = 0
  let last
  while (Date.now() < until) {
    await sleep(250)
    last = await session.snapshot()
    screens++
  }
  const bytes = process.output.counters().stdoutBytes
  await process.stop({ force: true })
  tell({ phase: 'end', bytes, screens, skipped: session.screen.skippedBytes, row: last?.rows[0] })
  await cleanup('flood', runtime, root)
}

/** The flood's baseline: `yes` on `script`'s terminal, read through a pipe and counted. */
async function floodBaseline() {
  globalThis.gc?.()
  tell({ phase: 'start' })
  const child = spawn('script', ['-qfc', 'yes', '/dev/null'], { stdio: ['pipe', 'pipe', 'ignore'] })
  let bytes = 0
  child.stdout.on('data', (chunk) => {
    bytes += chunk.length
  })
  await sleep(FLOOD_SECONDS * 1000)
  child.kill('SIGKILL')
  await new Promise((resolve) => child.on('close', resolve))
  tell({ phase: 'end', bytes })
}

async function flood(side) {
  const child = spawn(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), 'child', side], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const { samples, notes, ended, code } = await sampleRss(child, 250)
  if (code !== 0 || ended === undefined) throw new Error(`${side} child failed: exit ${code}`)
  samples.push({ t: ended.t, rss: ended.rss })
  const start = samples[0].rss
  const max = Math.max(...samples.map((s) => s.rss))
  const extra =
    ended.screens === undefined
      ? ''
      : `, ${ended.screens} screens read (first row ${JSON.stringify(ended.row)}), ${(ended.skipped / 1048576).toFixed(0)} MiB skipped by the screen`
  console.log(
    `  ${side.padEnd(9)}: ${(ended.bytes / 1048576).toFixed(0)} MiB shown in ${ended.t.toFixed(1)} s, RSS start ${start.toFixed(1)} MB, max ${max.toFixed(1)} MB${extra}`,
  )
  for (const note of notes) console.log(note)
  return { growth: max - start }
}

if (process.argv[2] === 'child') {
  if (process.argv[3] === 'toolvisor') await floodToolvisor()
  else await floodBaseline()
} else {
  console.log(`keystroke echo: ${ROUNDS} rounds of ${KEYS} keys, each side in turn`)
  const echoed = await echo()
  console.log(
    `yes on a terminal for ${FLOOD_SECONDS} s, the screen read every 250 ms; VmRSS sampled every 250 ms`,
  )
  const toolvisor = await flood('toolvisor')
  const baseline = await flood('baseline')
  const bounded = reportGrowth('terminal flood rss growth', toolvisor, baseline, TARGET_MB)
  if (!echoed || !bounded) process.exitCode = 1
}
