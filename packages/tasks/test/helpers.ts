import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { nativeSpawner } from '@toolvisor/launch-native'
import { createLaunchers, markedProcesses, Runtime, type RuntimeOptions } from '@toolvisor/process-runtime'
import { eventually, processesInRun } from '@toolvisor/process-runtime/testing'
import { afterEach, expect } from 'vitest'

export { output, preparedTool as tool } from '@toolvisor/process-runtime/testing'

const fixtures = join(dirname(fileURLToPath(import.meta.url)), 'fixtures')

/** A fixture of this package's tests. */
export function fixture(name: string): string {
  return join(fixtures, name)
}

const cleanups: Array<() => Promise<void> | void> = []

afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

/** A temporary directory removed after the test. */
export function tempDir(prefix = 'tv-tasks-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/**
 * A runtime for one test. After the test it is disposed, and the test fails if any process it
 * started (found by its marker or its cgroups) is still alive.
 */
export function makeRuntime(options: Partial<RuntimeOptions> = {}): Runtime {
  const runtime = new Runtime(
    { spawner: nativeSpawner(), ...options, stateDir: options.stateDir ?? tempDir('tv-state-') },
    createLaunchers(),
  )
  cleanups.push(async () => {
    await runtime.dispose()
    const left = () => [...markedProcesses(runtime.runId), ...processesInRun(runtime.runId)]
    await eventually(() => left().length === 0, 2000)
    expect(left(), `processes of ${runtime.runId} still running`).toEqual([])
  })
  return runtime
}
