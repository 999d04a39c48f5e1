// Shared pieces of the tool-processes benchmarks: a kernel with services and the mailbox in a temp
// state dir, tools written into a temp toolbox, statistics, the report line and the cleanup.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describePlugin } from '@toolvisor/describe-v2'
import { Kernel } from '@toolvisor/kernel'
import { MailboxToken, mailboxPlugin } from '@toolvisor/mailbox'
import { markedProcesses, RuntimeToken, runtimePlugin } from '@toolvisor/process-runtime'
import { SessionsToken, tasksPlugin } from '@toolvisor/tasks'
import { ToolsToken, toolboxPlugin } from '@toolvisor/toolbox'
// The statistics and the verdict of the runtime's benchmarks, so that every report reads alike.
import { percentile, since, sleep, verdict } from '../../process-runtime/bench/lib.mjs'
import { processesPlugin } from '../dist/index.js'

export { percentile, since, verdict }

/**
 * A temp dir with `tools` (name -> script) as executables in its `toolbox`, and a composed kernel
 * over it (`processes`: the processes plugin's configuration).
 */
export async function benchKernel(tools, processes = {}) {
  const root = mkdtempSync(join(tmpdir(), 'tv-bench-svc-'))
  const toolbox = join(root, 'toolbox')
  mkdirSync(toolbox)
  for (const [name, script] of Object.entries(tools)) {
    writeFileSync(join(toolbox, name), script)
    chmodSync(join(toolbox, name), 0o755)
  }
  const kernel = new Kernel()
  kernel.use(describePlugin)
  kernel.use(runtimePlugin, { stateDir: join(root, 'state') })
  kernel.use(tasksPlugin)
  kernel.use(mailboxPlugin)
  kernel.use(toolboxPlugin, { toolboxes: [toolbox] })
  await kernel.use(processesPlugin, processes)
  return {
    root,
    kernel,
    tools: kernel.get(ToolsToken),
    mailbox: kernel.get(MailboxToken),
    sessions: kernel.get(SessionsToken),
    runId: kernel.get(RuntimeToken).runId,
  }
}

/** Disposes the kernel, checks that no process it started is left, removes the temp dir. */
export async function cleanup(name, { kernel, runId, root }) {
  await kernel.dispose()
  const deadline = Date.now() + 3000
  while (markedProcesses(runId).length > 0 && Date.now() < deadline) await sleep(20)
  const left = markedProcesses(runId).length
  rmSync(root, { recursive: true, force: true })
  console.log(`${name} cleanup: ${left} processes left, temp dir removed ${verdict(left === 0)}`)
  if (left > 0) process.exitCode = 1
  return left
}

/** A call's answer as JSON, or a thrown error when it failed (a bench must not measure failures). */
export async function answerOf(tools, name, args, ctx) {
  const result = await tools.call(name, args, ctx)
  const text = result.content[0]?.text ?? ''
  if (result.isError) throw new Error(`${name} ${JSON.stringify(args)} failed: ${text}`)
  return JSON.parse(text)
}
