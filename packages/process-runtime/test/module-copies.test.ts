import { describe, expect, it, vi } from 'vitest'
import { expectNoneLeft, tempDir, tool } from './helpers.js'

type RuntimeModule = typeof import('../src/index.js')

/** A fresh copy of the runtime's modules, as a second version of the package in node_modules is. */
async function moduleCopy(): Promise<RuntimeModule> {
  vi.resetModules()
  return import('../src/index.js')
}

describe('two copies of the runtime in one process', () => {
  it('keep their runs apart: disposing one leaves the tools of the other running', async () => {
    const first = await moduleCopy()
    const second = await moduleCopy()
    const a = new first.Runtime({ stateDir: tempDir('tv-copy-a-') }, first.createLaunchers())
    const b = new second.Runtime({ stateDir: tempDir('tv-copy-b-') }, second.createLaunchers())
    try {
      // Each copy counts its own instances: both are the first runtime of their copy.
      expect(a.runId).not.toBe(b.runId)
      const sleeper = tool('/bin/sleep', { process: { mode: 'stream' } })
      const kept = a.start({ tool: sleeper, argv: ['300'] })
      await kept.launched
      const other = b.start({ tool: sleeper, argv: ['300'] })
      await other.launched
      // The other copy's dispose kills every process marked with its run: only its own.
      await b.dispose()
      await expectNoneLeft(b.runId)
      expect(kept.lifecycle.status).toBe('running')
      expect(first.markedProcesses(a.runId)).toHaveLength(1)
    } finally {
      await a.dispose()
      await b.dispose()
      await expectNoneLeft(a.runId)
    }
  })
})
