import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describePlugin } from '@toolvisor/describe-v2'
import { Kernel } from '@toolvisor/kernel'
import { markedProcesses, RuntimeToken, runtimePlugin, TasksToken } from '@toolvisor/process-runtime'
import { type ToolCallContext, ToolsToken, toolboxPlugin } from '@toolvisor/toolbox'
import { afterEach, expect } from 'vitest'
import { processesPlugin } from '../src/index.js'

export const fixtures = join(dirname(fileURLToPath(import.meta.url)), 'fixtures')
const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

/**
 * A kernel with the fixtures toolbox and the processes tool. `call` answers the parsed JSON of a
 * call, `raw` the result itself. After the test, no process it started may be left.
 */
export async function compose(
  processes: Record<string, unknown> = {},
  toolbox: Record<string, unknown> = {},
) {
  const stateDir = mkdtempSync(join(tmpdir(), 'tv-proc-'))
  const kernel = new Kernel()
  kernel.use(describePlugin)
  kernel.use(runtimePlugin, { stateDir })
  kernel.use(toolboxPlugin, { toolboxes: [fixtures], yieldMs: 100, ...toolbox })
  await kernel.use(processesPlugin, processes)
  const runId = (kernel.get(RuntimeToken) as unknown as { runId: string }).runId
  cleanups.push(async () => {
    await kernel.dispose()
    expect(markedProcesses(runId)).toEqual([])
    rmSync(stateDir, { recursive: true, force: true })
  })
  const tools = kernel.get(ToolsToken)!
  const tasks = kernel.get(TasksToken)!
  const raw = (name: string, args: unknown, session = 'alice') => {
    const ctx: ToolCallContext = { sessionId: session, signal: new AbortController().signal }
    return tools.call(name, args, ctx)
  }
  const call = async (name: string, args: unknown, session = 'alice') => {
    const result = await raw(name, args, session)
    return { isError: result.isError, body: JSON.parse(result.content[0]!.text) }
  }
  /** Waits until task `id` of `session` ended (no fixed sleep: the registry's own bounded wait). */
  const ended = (id: string, session = 'alice') => tasks.wait(id, session, 10_000)
  return { tools, call, raw, ended }
}
