import { definePlugin, Kernel, KernelError } from '@toolvisor/kernel'
import { createLaunchers, LaunchersToken } from '@toolvisor/process-runtime'
import { describe, expect, it } from 'vitest'
import { landlockPlugin } from '../src/plugin.js'

const launchersPlugin = definePlugin({
  name: 'launchers',
  provides: [LaunchersToken],
  apply: (ctx) => ctx.provide(LaunchersToken, createLaunchers()),
})

describe('landlockPlugin', () => {
  it('registers the landlock mechanism and removes it on dispose', async () => {
    await using kernel = new Kernel()
    await kernel.use(launchersPlugin)
    const handle = kernel.use(landlockPlugin)
    await handle
    const launchers = kernel.get(LaunchersToken)!
    const mechanism = launchers.sandbox('landlock')
    expect(mechanism).toMatchObject({ name: 'landlock', handlesRunAs: true })
    expect((await mechanism!.describe()).available).toBe(true)
    await handle.dispose()
    expect(launchers.sandbox('landlock')).toBeUndefined()
  })

  it('passes the launcher option through', async () => {
    await using kernel = new Kernel()
    await kernel.use(launchersPlugin)
    await kernel.use(landlockPlugin, { launcher: '/nonexistent/landlock-launcher' })
    const description = await kernel.get(LaunchersToken)!.sandbox('landlock')!.describe()
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
