import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Kernel, KernelError } from '@toolvisor/kernel'
import { LaunchersToken, runtimePlugin } from '@toolvisor/process-runtime'
import { describe, expect, it } from 'vitest'
import { BwrapToken, bwrapPlugin } from './plugin.js'

describe('bwrapPlugin', () => {
  it('provides the bwrap mechanism; a runtime used before it waits for it (order-free composition)', async () => {
    const kernel = new Kernel()
    const stateDir = mkdtempSync(join(tmpdir(), 'tvbw-plugin-'))
    const runtime = kernel.use(runtimePlugin, { stateDir, sandbox: 'bwrap' })
    expect(runtime.missing).toEqual(['sandbox-mechanism:bwrap'])
    const handle = kernel.use(bwrapPlugin)
    await kernel.ready({ timeoutMs: 5000 })
    const bwrap = kernel.get(LaunchersToken)?.sandbox('bwrap')
    expect(bwrap?.name).toBe('bwrap')
    expect(bwrap?.handlesRunAs).toBe(false)
    expect(kernel.get(BwrapToken)).toBe(bwrap)
    // Unloading the mechanism takes the runtime that needs it down with it, back to waiting.
    await handle.dispose()
    expect(runtime.state).toBe('pending')
    await kernel.dispose()
    rmSync(stateDir, { recursive: true, force: true })
  })

  it('passes the configured binary to the mechanism', async () => {
    const kernel = new Kernel()
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
    const wrapped = kernel.get(BwrapToken)?.wrap(launch, policy, undefined)
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
