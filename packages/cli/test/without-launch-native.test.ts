/**
 * A library host that composes the runtime without `@toolvisor/launch-native` (decision 0107):
 * launches are spawned by Node itself, and tools still run under bwrap and Landlock, confined as
 * declared (the final exec stage, `toolvisor-exec`, is the runtime's own). What it does not get, a
 * cgroup per launch and its limits, is said by the launch facts (`check --probe`).
 */
import { chmodSync, existsSync, mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describePlugin } from '@toolvisor/describe-v2'
import { Kernel } from '@toolvisor/kernel'
import { markedProcesses, type Runtime, RuntimeToken, runtimePlugin } from '@toolvisor/process-runtime'
import { bwrapPlugin } from '@toolvisor/sandbox-bwrap'
import { landlockPlugin } from '@toolvisor/sandbox-landlock'
import { tasksPlugin } from '@toolvisor/tasks'
import { ToolsToken, toolboxPlugin } from '@toolvisor/toolbox'
import { afterEach, describe, expect, it } from 'vitest'
import { eventually } from './helpers.js'
import { dir, hasBwrap, load, sandboxedTool } from './sandbox-helpers.js'

const kernels: Kernel[] = []
afterEach(async () => {
  for (const kernel of kernels.splice(0)) await kernel.dispose()
})

/** A toolbox with `confined`: reads its directory, writes `work` only. */
function toolbox(): string {
  const box = dir('tv-no-native-')
  mkdirSync(join(box, 'work'))
  chmodSync(join(box, 'work'), 0o777) // the sandbox user writes there when this runs as root
  sandboxedTool(box, 'confined', { sandbox: { fs: { read: ['.'], write: ['./work'] } } })
  return box
}

/** What `confined` does: writes in its grant, tries beside it, and says where it runs from. */
const SCRIPT = [
  'echo inside > work/written && cat work/written',
  '(echo out > escaped) 2>/dev/null && echo escaped || echo denied',
].join('\n')

/** The kernel a library host composes: no launch-native, the runtime on Node's spawn. */
async function libraryHost(box: string, sandbox: 'bwrap' | 'landlock') {
  const kernel = new Kernel()
  kernels.push(kernel)
  kernel.use(describePlugin)
  kernel.use(runtimePlugin, { stateDir: dir('tv-no-native-state-'), sandbox })
  if (sandbox === 'bwrap') kernel.use(bwrapPlugin)
  else kernel.use(landlockPlugin)
  kernel.use(tasksPlugin)
  kernel.use(toolboxPlugin, { toolboxes: [box] })
  await kernel.ready({ timeoutMs: 30_000 })
  return { tools: kernel.get(ToolsToken)!, runtime: kernel.get(RuntimeToken)! as Runtime }
}

const mechanisms = [...(hasBwrap ? ['bwrap' as const] : []), 'landlock' as const]

describe('a library host without launch-native', () => {
  if (!hasBwrap) it.skip('under bwrap (skipped: bwrap is not installed here)', () => {})

  for (const sandbox of mechanisms) {
    it(`runs a tool under ${sandbox}, confined as declared, spawned from Node`, async () => {
      const box = toolbox()
      const { tools, runtime } = await libraryHost(box, sandbox)
      expect(tools.loadErrors()).toEqual([])
      const result = await tools.call(
        'confined',
        { script: SCRIPT },
        { sessionId: 's', signal: new AbortController().signal },
      )
      const text = result.content.map((c) => c.text).join('\n')
      expect(result.isError, text).toBeFalsy()
      expect(text).toContain('inside\ndenied')
      expect(readFileSync(join(box, 'work', 'written'), 'utf8')).toBe('inside\n')
      expect(existsSync(join(box, 'escaped'))).toBe(false)
      const facts = runtime.launchFacts()
      expect(facts.forkServer).toEqual({
        available: false,
        reason: expect.stringContaining('@toolvisor/launch-native'),
      })
      expect(facts.containment.cgroup).toMatchObject({ available: false })
      await kernels.pop()!.dispose()
      expect(await eventually(() => markedProcesses(runtime.runId).length === 0)).toBe(true)
    })
  }

  it('is what toolvisor.json\'s "launch": {"native": false} composes', async () => {
    const box = toolbox()
    const composed = await load(box, { launch: { native: false }, sandbox: 'landlock' })
    const { isError, text } = await composed.call('confined', SCRIPT)
    expect(isError, text).toBeFalsy()
    expect(text).toContain('inside\ndenied')
    expect(composed.runtime.launchFacts().forkServer).toMatchObject({ available: false })
    const native = await load(toolbox(), { sandbox: 'landlock' })
    expect(native.runtime.launchFacts().forkServer).toMatchObject({ available: true })
  })
})
