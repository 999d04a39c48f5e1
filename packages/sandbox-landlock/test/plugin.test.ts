import { Kernel, KernelError } from '@toolvisor/kernel'
import { LaunchersToken, runtimePlugin } from '@toolvisor/process-runtime'
import { afterAll, describe, expect, it } from 'vitest'
import { LandlockToken, landlockPlugin } from '../src/plugin.js'
import { removeTempDirs, tempDir } from './helpers.js'

afterAll(() => removeTempDirs())

describe('landlockPlugin', () => {
  it('provides the landlock mechanism; a runtime used before it waits for it', async () => {
    await using kernel = new Kernel()
    const stateDir = tempDir('tv-landlock-plugin-')
    const runtime = kernel.use(runtimePlugin, { stateDir, sandbox: 'landlock' })
    expect(runtime.missing).toEqual(['sandbox-mechanism:landlock'])
    kernel.use(landlockPlugin)
    await kernel.ready({ timeoutMs: 5000 })
    const mechanism = kernel.get(LaunchersToken)!.sandbox('landlock')
    expect(mechanism).toMatchObject({ name: 'landlock', handlesRunAs: true })
    expect(kernel.get(LandlockToken)).toBe(mechanism)
    expect((await mechanism!.describe()).available).toBe(true)
  })

  it('passes the launcher option through', async () => {
    await using kernel = new Kernel()
    await kernel.use(landlockPlugin, { launcher: '/nonexistent/landlock-launcher' })
    const description = await kernel.get(LandlockToken)!.describe()
    expect(description.unavailable?.reason).toBe(
      'the Landlock launcher /nonexistent/landlock-launcher does not exist',
    )
  })

  it('refuses a bad config (KERNEL_ERR_INVALID_CONFIG)', () => {
    const kernel = new Kernel()
    let thrown: unknown
    try {
      kernel.use(landlockPlugin, { launcher: 7 } as never)
    } catch (error) {
      thrown = error
    }
    expect(KernelError.is(thrown)).toBe(true)
    expect((thrown as KernelError).code).toBe('KERNEL_ERR_INVALID_CONFIG')
    expect((thrown as KernelError).message).toContain('config.launcher')
  })
})
