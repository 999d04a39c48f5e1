import { definePlugin, Kernel, KernelError } from '@toolvisor/kernel'
import { createLaunchers, LaunchersToken } from '@toolvisor/process-runtime'
import { describe, expect, it } from 'vitest'
import { bwrapPlugin } from './plugin.js'

const launchersPlugin = () => {
  const launchers = createLaunchers()
  return {
    launchers,
    plugin: definePlugin({
      name: 'launchers',
      provides: [LaunchersToken],
      apply: (ctx) => ctx.provide(LaunchersToken, launchers),
    }),
  }
}

describe('bwrapPlugin', () => {
  it('registers the bwrap mechanism while active and removes it on dispose', async () => {
    const kernel = new Kernel()
    const { launchers, plugin } = launchersPlugin()
    const handle = kernel.use(bwrapPlugin)
    expect(handle.missing).toEqual(['launchers'])
    kernel.use(plugin)
    await handle
    const bwrap = launchers.sandbox('bwrap')
    expect(bwrap?.name).toBe('bwrap')
    expect(bwrap?.handlesRunAs).toBe(false)
    await handle.dispose()
    expect(launchers.sandbox('bwrap')).toBeUndefined()
    await kernel.dispose()
  })

  it('passes the configured binary to the mechanism', async () => {
    const kernel = new Kernel()
    const { launchers, plugin } = launchersPlugin()
    kernel.use(plugin)
    await kernel.use(bwrapPlugin, { bwrap: '/opt/bubblewrap/bin/bwrap' })
    const policy = {
      toolDir: '/usr/bin',
      executable: '/usr/bin/true',
      read: [],
      write: [],
      net: 'host',
      tmp: 'shared',
      declared: [],
      pins: {},
    } as const
    const launch = { file: '/usr/bin/true', args: [], env: {}, cwd: '/', extraFds: [] }
    const wrapped = launchers.sandbox('bwrap')?.wrap(launch, policy, undefined)
    expect(wrapped?.file).toBe('/opt/bubblewrap/bin/bwrap')
    await kernel.dispose()
  })

  it('refuses an unknown or empty config key (KERNEL_ERR_INVALID_CONFIG)', () => {
    const kernel = new Kernel()
    expect(() => kernel.use(bwrapPlugin, { bwrap: '' })).toThrow(KernelError)
    expect(() => kernel.use(bwrapPlugin, { bwrap: '' })).toThrow(/config\.bwrap/)
    expect(() => kernel.use(bwrapPlugin, { bwarp: 'x' } as never)).toThrow(/bwarp/)
  })
})
