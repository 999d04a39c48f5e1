// A background bash task printing 1 GiB (issue 13): RSS of the process that runs toolvisor (a
// kernel with the runtime, the toolbox, the mailbox and the bash plugin; a follower calling
// `bash_output` every 250 ms) against a bare node reading the same command's stdout through a
// pipe. Each side runs in a fresh child node; this process samples its VmRSS every 250 ms. Target:
// growth <= 64 MB. Also checked: the reads say what they dropped, the last one ends with the
// completed status, and the spill file holds every byte.
// Run after `pnpm --filter @toolvisor/tool-bash build`: `node bench/flood.mjs`.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { reportGrowth, sampleRss, sleep, verdict } from '../../process-runtime/bench/lib.mjs'

const MiB = 1024 * 1024
const BYTES = Number(process.env.BENCH_BYTES ?? 1024 * MiB)
const SAMPLE_MS = 250
const TARGET_MB = 64
const COMMAND = `yes 'a line of a flood of output, 48 bytes long..' | head -c ${BYTES}`

function tell(message) {
  process.stdout.write(`${JSON.stringify(message)}\n`)
}

/** The toolvisor side: the bash plugin's background task, read by `bash_output` as a model would. */
async function childToolvisor() {
  const { describePlugin } = await import('@toolvisor/describe-v2')
  const { Kernel } = await import('@toolvisor/kernel')
  const { MailboxToken, mailboxPlugin } = await import('@toolvisor/mailbox')
  const { markedProcesses, RuntimeToken, runtimePlugin } = await import('@toolvisor/process-runtime')
  const { SessionsToken, TasksToken, tasksPlugin } = await import('@toolvisor/tasks')
  const { ToolsToken, toolboxPlugin } = await import('@toolvisor/toolbox')
  const { bashPlugin } = await import('../dist/index.js')
  const root = mkdtempSync(join(tmpdir(), 'tv-bench-flood-'))
  const kernel = new Kernel()
  kernel.use(describePlugin)
  // The spill file must hold every byte: the cap (spillBytes, 256 MiB by default) and the budget above it.
  kernel.use(runtimePlugin, { stateDir: join(root, 'state'), stateBytes: 4 * BYTES, spillBytes: 2 * BYTES })
  kernel.use(tasksPlugin)
  kernel.use(toolboxPlugin, {})
  kernel.use(mailboxPlugin, {})
  kernel.use(bashPlugin, { workdir: root })
  await kernel.ready()
  kernel.get(SessionsToken).open({ id: 'bench' })
  kernel.get(MailboxToken).open('bench')
  const tools = kernel.get(ToolsToken)
  const tasks = kernel.get(TasksToken)
  const ctx = { sessionId: 'bench', signal: new AbortController().signal }
  const text = async (name, args) => (await tools.call(name, args, ctx)).content[0].text
  globalThis.gc?.()
  tell({ phase: 'start' })
  const started = await text('bash', { command: COMMAND, description: 'flood', run_in_background: true })
  const id = started.replace('started background task ', '')
  let reads = 0
  let dropped = 0
  let shown = 0
  let last = ''
  for (;;) {
    await sleep(SAMPLE_MS)
    last = await text('bash_output', { task_id: id })
    reads++
    shown += last.length
    if (last.includes('[some output was dropped from memory; full output: ')) dropped++
    if (!last.endsWith('[status: running]')) break
  }
  const process = tasks.process(id, 'bench')
  const spill = process.output.stdout().spillPath
  const spillBytes = spill ? statSync(spill).size : 0
  tell({
    phase: 'end',
    code: tasks.get(id, 'bench').exit?.code,
    bytes: process.output.counters().stdoutBytes,
    spillBytes,
    reads,
    dropped,
    shown,
    completed: last.endsWith('[status: completed, exit code: 0]'),
  })
  const runId = kernel.get(RuntimeToken).runId
  if (spill) rmSync(spill)
  await kernel.dispose()
  const left = markedProcesses(runId)
  rmSync(root, { recursive: true, force: true })
  console.log(`flood cleanup: ${left.length} processes left, temp dir removed ${verdict(left.length === 0)}`)
  if (left.length > 0) process.exitCode = 1
}

/** The baseline side: the same command, its stdout read through a pipe and counted. */
async function childBaseline() {
  globalThis.gc?.()
  tell({ phase: 'start' })
  let bytes = 0
  const child = spawn('bash', ['--norc', '--noprofile', '-c', COMMAND], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  child.stdout.on('data', (chunk) => {
    bytes += chunk.length
  })
  const code = await new Promise((resolve) => child.on('close', resolve))
  tell({ phase: 'end', code, bytes, spillBytes: bytes, completed: true })
}

async function measure(side) {
  const child = spawn(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), 'child', side], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const { samples, notes, ended, code } = await sampleRss(child, SAMPLE_MS)
  if (
    code !== 0 ||
    ended?.code !== 0 ||
    ended.bytes !== BYTES ||
    ended.spillBytes !== BYTES ||
    !ended.completed
  ) {
    throw new Error(`${side} child failed: exit ${code}, ${JSON.stringify(ended)}`)
  }
  samples.push({ t: ended.t, rss: ended.rss })
  const start = samples[0].rss
  const max = Math.max(...samples.map((s) => s.rss))
  console.log(
    `  ${side.padEnd(9)}: start ${start.toFixed(1)} MB, max ${max.toFixed(1)} MB, end ${ended.rss.toFixed(1)} MB, ` +
      `${ended.t.toFixed(1)} s` +
      (ended.reads === undefined
        ? ''
        : `, ${ended.reads} bash_output reads (${ended.dropped} said what they dropped, ${(ended.shown / 1024).toFixed(0)} KiB shown), spill file ${ended.spillBytes} bytes`),
  )
  for (const note of notes) console.log(note)
  return { ...ended, growth: max - start }
}

if (process.argv[2] === 'child') {
  if (process.argv[3] === 'toolvisor') await childToolvisor()
  else await childBaseline()
} else {
  console.log(
    `flood: one background bash task printing ${BYTES / MiB} MiB; VmRSS sampled every ${SAMPLE_MS} ms`,
  )
  const toolvisor = await measure('toolvisor')
  const baseline = await measure('baseline')
  reportGrowth('bash flood rss growth', toolvisor, baseline, TARGET_MB)
  const told = toolvisor.dropped > 0 && toolvisor.completed && toolvisor.spillBytes === BYTES
  console.log(
    `bash flood reads: ${toolvisor.reads} incremental reads, ${toolvisor.dropped} said what was dropped, the last one completed, spill file complete ${verdict(told)}`,
  )
  if (!told) process.exitCode = 1
}
