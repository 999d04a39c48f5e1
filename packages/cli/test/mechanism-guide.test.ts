/**
 * docs/guides/adding-a-sandbox-mechanism.md works as printed: its mechanism is the one the runtime
 * ships for tests, its plugin is `fixtures/sandbox-logged/plugin.ts`, and the composition it shows (the
 * mechanism's plugin used last) becomes ready, every describe is refused as the guide says (the
 * mechanism enforces nothing, and describe runs confined), and without the plugin ready() reports
 * what is missing.
 */
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describePlugin } from '@toolvisor/describe-v2'
import { Kernel } from '@toolvisor/kernel'
import { runtimePlugin } from '@toolvisor/process-runtime'
import { tasksPlugin } from '@toolvisor/tasks'
import { ToolsToken, toolboxPlugin } from '@toolvisor/toolbox'
import { afterEach, describe, expect, it } from 'vitest'
import { loggedPlugin } from './fixtures/sandbox-logged/plugin.js'
import { examples, tempDir } from './helpers.js'

const root = resolve(examples, '..', '..')
const guide = readFileSync(join(root, 'docs', 'guides', 'adding-a-sandbox-mechanism.md'), 'utf8')
const blocks = [...guide.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!)

/** The code without its leading comment lines and imports: what must match line for line. */
function body(code: string): string {
  return code
    .split('\n')
    .filter((line) => !line.startsWith('//') && !line.startsWith('import '))
    .join('\n')
    .trim()
}

const kernels: Kernel[] = []
afterEach(async () => {
  for (const kernel of kernels.splice(0)) await kernel.dispose()
})

/** The guide's composition, in its order, with or without the mechanism's plugin. */
function composed(withMechanism: boolean) {
  const dir = tempDir('tv-mechanism-')
  const logFile = join(dir, 'launches.log')
  const kernel = new Kernel()
  kernels.push(kernel)
  kernel.use(toolboxPlugin, { toolboxes: [examples] })
  kernel.use(runtimePlugin, { stateDir: join(dir, 'state'), sandbox: 'none-but-logged' })
  kernel.use(tasksPlugin)
  kernel.use(describePlugin)
  if (withMechanism) kernel.use(loggedPlugin, { logFile })
  return { kernel, logFile }
}

describe('the adding-a-sandbox-mechanism guide', () => {
  it('prints the mechanism the runtime tests and the plugin this test composes', () => {
    const mechanism = readFileSync(
      join(root, 'packages', 'process-runtime', 'src', 'internal', 'logged-mechanism.ts'),
      'utf8',
    )
    const plugin = readFileSync(join(import.meta.dirname, 'fixtures', 'sandbox-logged', 'plugin.ts'), 'utf8')
    expect(body(blocks.find((code) => code.includes('loggedMechanism(log'))!)).toBe(body(mechanism))
    expect(body(blocks.find((code) => code.includes('definePlugin({'))!)).toBe(body(plugin))
  })

  it('composes in the order it shows; describe runs confined under it, which it refuses, so no tool loads', async () => {
    const { kernel } = composed(true)
    await kernel.ready({ timeoutMs: 5_000 })
    const tools = kernel.get(ToolsToken)!
    expect(tools.list()).toEqual([])
    const messages = tools.loadErrors().map((report) => report.message)
    expect(messages.length).toBeGreaterThan(0)
    for (const message of messages) {
      expect(message).toMatch(
        /: describe cannot run confined: none-but-logged: net: none-but-logged enforces nothing \(fix: use --sandbox bwrap\)$/,
      )
    }
  })

  it('without the mechanism plugin, ready() names the token the runtime waits for', async () => {
    const { kernel } = composed(false)
    await expect(kernel.ready({ timeoutMs: 300 })).rejects.toThrow(/none-but-logged/)
  })
})
