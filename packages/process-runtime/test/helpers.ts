import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, expect } from 'vitest'
import type { Launchers, Spawner } from '../src/index.js'
import { createLaunchers, markedProcesses, Runtime, type RuntimeOptions } from '../src/index.js'
import { output, preparedTool, processesInRun, processSpec, runtimeSpec } from '../src/testing.js'

export { output, processSpec, runtimeSpec }

export const fixtures = join(dirname(fileURLToPath(import.meta.url)), 'fixtures')

export function fixture(name: string): string {
  return join(fixtures, name)
}

/**
 * The launch path these tests run on: Node's own spawn, this package's default; `native` when
 * `@toolvisor/launch-native` runs them (its vitest config sets `TOOLVISOR_TEST_SPAWNER=native`), so
 * the fork server keeps the coverage of the runtime's behaviour tests. Imported from the workspace
 * at test time: launch-native depends on this package, not the other way.
 */
export const spawnerUnderTest: 'node' | 'native' =
  process.env.TOOLVISOR_TEST_SPAWNER === 'native' ? 'native' : 'node'

async function nativeSpawner(): Promise<Spawner | undefined> {
  if (spawnerUnderTest === 'node') return undefined
  const where = new URL('../../launch-native/src/index.ts', import.meta.url).href
  const native = (await import(where)) as { nativeSpawner: () => Spawner }
  return native.nativeSpawner()
}

const testSpawner = await nativeSpawner()

const cleanups: Array<() => Promise<void> | void> = []

afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

/** A temporary directory removed after the test. */
export function tempDir(prefix = 'tv-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/**
 * A runtime for one test. After the test it is disposed, and the test fails if any process it
 * started (found by its marker, descendants included) is still alive.
 */
export function makeRuntime(
  options: Partial<RuntimeOptions> = {},
  launchers: Launchers = createLaunchers(),
): Runtime {
  const stateDir = options.stateDir ?? tempDir('tv-state-')
  const spawner = options.spawner ?? testSpawner
  const runtime = new Runtime({ ...options, ...(spawner ? { spawner } : {}), stateDir }, launchers)
  cleanups.push(async () => {
    await runtime.dispose()
    await expectNoneLeft(runtime.runId)
  })
  return runtime
}

/**
 * Waits up to `ms` for every process marked with `prefix`, and every one in a cgroup of run
 * `prefix`, to be gone, then asserts it.
 */
export async function expectNoneLeft(prefix: string, ms = 2000): Promise<void> {
  const left = () => [...markedProcesses(prefix), ...processesInRun(prefix)]
  const deadline = Date.now() + ms
  while (left().length > 0 && Date.now() < deadline) await sleep(25)
  expect(markedProcesses(prefix), `processes of ${prefix} still running`).toEqual([])
  expect(processesInRun(prefix), `processes in the cgroups of ${prefix} still running`).toEqual([])
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/** A prepared tool built directly (no describe run). */
export const tool = preparedTool
