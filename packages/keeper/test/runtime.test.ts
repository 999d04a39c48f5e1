import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { cgroupHost, procStat } from '@toolvisor/containment'
import { nativeSpawner } from '@toolvisor/launch-native'
import { eventually, processesRunning } from '@toolvisor/test-kit'
import { afterEach, describe, expect, it } from 'vitest'
import { makeRuntime, tempDir } from '../../process-runtime/test/helpers.js'
import { Keepers, type KeptChild } from '../src/index.js'
import { alive, ticker } from './helpers.js'

/**
 * Kept processes through the runtime, as `serve` composes it (the fork server, a cgroup per launch
 * where the host has them): the runtime is a process of its own (`runtime-daemon.mjs`), killed with
 * kill -9 or disposed with keep; its watchdog and the next start on the same state directory must
 * leave the kept process running, in its cgroup, reported lost to nobody, for a daemon to re-adopt.
 */

const daemonScript = join(import.meta.dirname, 'runtime-daemon.mjs')

const cleanups: (() => void)[] = []
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup()
})

interface Started {
  readonly daemon: ChildProcess
  readonly pid: number
  readonly runId: string
  readonly dir: string
  readonly said: AsyncIterableIterator<string>
}

async function startDaemon(stateDir: string, extra: Record<string, unknown> = {}): Promise<Started> {
  const daemon = spawn(
    process.execPath,
    [daemonScript, JSON.stringify({ stateDir, argv: ticker, ...extra })],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  )
  cleanups.push(() => daemon.kill('SIGKILL'))
  const said = createInterface({ input: daemon.stdout! })[Symbol.asyncIterator]()
  const first = await said.next()
  const started = JSON.parse(first.value as string) as { pid: number; runId: string; dir: string }
  // Some ticks first: the ones after are printed with no runtime at all.
  expect(
    await eventually(
      () => existsSync(join(started.dir, 'out')) && statSync(join(started.dir, 'out')).size > 100,
    ),
  ).toBe(true)
  cleanups.push(() => {
    try {
      process.kill(started.pid, 'SIGKILL')
    } catch {
      // gone
    }
  })
  return { daemon, said, ...started }
}

function cgroupOf(pid: number): string {
  return readFileSync(`/proc/${pid}/cgroup`, 'utf8')
}

/** Re-adopts the kept process: every tick from the first in order, an answer on stdin, exit 7 once. */
async function adoptAndEnd(stateDir: string, started: Started): Promise<void> {
  const keepers = new Keepers({ root: join(stateDir, 'keep') })
  expect(keepers.list()).toEqual([started.dir])
  const child: KeptChild = await keepers.adopt(started.dir)
  expect(child.pid).toBe(started.pid)
  const lines: string[] = []
  let rest = ''
  child.stderr.resume()
  child.stdout.on('data', (chunk: Buffer) => {
    const parts = (rest + chunk.toString()).split('\n')
    rest = parts.pop()!
    lines.push(...parts)
  })
  const closed = new Promise((resolve) => child.once('close', resolve))
  const exit = new Promise((resolve) => child.once('exit', (code, signal) => resolve([code, signal])))
  child.stdin.write('hello\n')
  expect(await eventually(() => lines.includes('echo: hello'))).toBe(true)
  child.stdin.write('quit\n')
  expect(await exit).toEqual([7, null])
  await closed
  const ticks = lines.filter((line) => line.startsWith('tick ')).map((line) => Number(line.slice(5)))
  expect(ticks.length).toBeGreaterThan(10)
  expect(ticks).toEqual(ticks.map((_, i) => i))
  expect(await eventually(() => !alive(started.pid) && !existsSync(started.dir))).toBe(true)
}

const cgroups = cgroupHost(undefined).available

describe('a kept process through the runtime', () => {
  it(`kill -9 of the runtime: its watchdog and the next start leave it running${cgroups ? ' in its cgroup' : ''}, lost to nobody, and a daemon re-adopts it`, async () => {
    const stateDir = tempDir('tv-kept-')
    const started = await startDaemon(stateDir)
    const cgroupBefore = cgroupOf(started.pid)
    if (cgroups) expect(cgroupBefore).toContain(`/${started.runId}/`)
    started.daemon.kill('SIGKILL')
    await new Promise((resolve) => started.daemon.once('exit', resolve))
    // The runtime's watchdog ran (it kills what the log lists as running) and went.
    const runDir = join(stateDir, 'runs', started.runId)
    expect(await eventually(() => processesRunning(`watchdog.js ${runDir}`).length === 0)).toBe(true)
    expect(alive(started.pid)).toBe(true)
    // The next start: it recovers the dead run and reaps the cgroups of runtimes gone (no grace here).
    const next = makeRuntime({ stateDir, orphanGraceMs: 0 })
    expect(next.lost().map((lost) => lost.tool)).toEqual([])
    expect(alive(started.pid)).toBe(true)
    expect(cgroupOf(started.pid)).toBe(cgroupBefore)
    await adoptAndEnd(stateDir, started)
  })

  it(`kill -9 of the runtime: the next one adopts it (same pid, a new id, its whole output from the first byte, stdin, its exit)${cgroups ? ', its cgroup still holding it and removed at its end' : ''}`, async () => {
    const stateDir = tempDir('tv-kept-')
    const started = await startDaemon(stateDir)
    const cgroupBefore = cgroupOf(started.pid)
    started.daemon.kill('SIGKILL')
    await new Promise((resolve) => started.daemon.once('exit', resolve))
    const keeping = new Keepers({ root: join(stateDir, 'keep') })
    const next = makeRuntime({ stateDir, orphanGraceMs: 0, spawner: nativeSpawner(), keeping })
    const [record, ...others] = next.kept()
    expect(others).toEqual([])
    expect(record).toMatchObject({ run: started.runId, pid: started.pid, tool: 'ticker' })
    const tool = await next.preparePlain({ name: 'ticker', file: '/usr/bin/python3' })
    const adopted = next.adopt(record!, { tool, argv: ticker, stdin: 'open' })
    await adopted.launched
    expect(adopted.pid).toBe(started.pid)
    expect(adopted.resumedAt).toBeInstanceOf(Date)
    expect(adopted.startedAt.getTime()).toBeLessThan(adopted.resumedAt!.getTime())
    // Held by this runtime now: a later start would not offer it again.
    expect(next.kept()).toEqual([])
    await adopted.write('hello')
    const text = () => adopted.output.stdout().head.toString()
    expect(await eventually(() => text().includes('echo: hello'))).toBe(true)
    await adopted.write('quit')
    expect(await adopted.exit).toMatchObject({ code: 7 })
    const ticks = text()
      .split('\n')
      .filter((line) => line.startsWith('tick '))
      .map((line) => Number(line.slice(5)))
    expect(ticks.length).toBeGreaterThan(10)
    expect(ticks).toEqual(ticks.map((_, i) => i))
    expect(await eventually(() => !alive(started.pid) && !existsSync(started.dir))).toBe(true)
    // It ended under the runtime that took it over: a later start reports nothing of it lost.
    await next.dispose()
    expect(makeRuntime({ stateDir, orphanGraceMs: 0 }).lost()).toEqual([])
    if (cgroups) {
      // Its leaf, below the dead run's cgroup, held it to the end and went with it.
      expect(record!.cgroup).toEqual({ run: started.runId, leaf: record!.id })
      const host = cgroupHost(undefined)
      const leaves = host.available
        ? host.hierarchies.map((h) => join(h.base, started.runId, record!.id))
        : []
      expect(cgroupBefore).toContain(`/${started.runId}/${record!.id}`)
      expect(await eventually(() => leaves.every((dir) => !existsSync(dir)))).toBe(true)
    }
  })

  it('dispose with keep: the kept process runs on, its run is left for the next start (lost to nobody), and a daemon re-adopts it', async () => {
    const stateDir = tempDir('tv-kept-')
    const started = await startDaemon(stateDir)
    started.daemon.stdin!.write('dispose\n')
    expect((await started.said.next()).value).toBe('disposed')
    await new Promise((resolve) => started.daemon.once('exit', resolve))
    // Left open for the next start, which spares what its keeper holds and reports nothing lost.
    const runDir = join(stateDir, 'runs', started.runId)
    expect(existsSync(join(runDir, 'owner.json'))).toBe(true)
    expect(await eventually(() => processesRunning(`watchdog.js ${runDir}`).length === 0)).toBe(true)
    expect(alive(started.pid)).toBe(true)
    const next = makeRuntime({ stateDir, orphanGraceMs: 0 })
    expect(next.lost()).toEqual([])
    await adoptAndEnd(stateDir, started)
  })
})

describe('a keeper that died while no runtime ran', () => {
  for (const how of ['kill -9 of the runtime', 'dispose with keep'] as const)
    it(`${how}, then kill -9 of the keeper: the next start kills what it ran and reports it lost, once, with its task and session`, async () => {
      const stateDir = tempDir('tv-kept-')
      const started = await startDaemon(stateDir)
      if (how === 'kill -9 of the runtime') started.daemon.kill('SIGKILL')
      else started.daemon.stdin!.write('dispose\n')
      await new Promise((resolve) => started.daemon.once('exit', resolve))
      const keeper = procStat(started.pid)!.ppid
      process.kill(keeper, 'SIGKILL')
      expect(await eventually(() => !alive(keeper))).toBe(true)
      const next = makeRuntime({ stateDir, orphanGraceMs: 0 })
      expect(next.kept()).toEqual([])
      const lost = next.lost()
      expect(lost).toHaveLength(1)
      expect(lost[0]).toMatchObject({
        run: started.runId,
        pid: started.pid,
        tool: 'ticker',
        task: 'p1',
        session: 'alice',
        kind: 'service',
      })
      expect(await eventually(() => !alive(started.pid))).toBe(true)
      // Told once: the start after it finds nothing new.
      expect(makeRuntime({ stateDir }).lost()).toEqual([])
    })
})

describe('a keeper whose daemon never comes back', () => {
  it.skipIf(!cgroups)(
    `past its bound, kills what the launch started outside its process group too: its cgroup (${cgroups ? 'runs here' : 'skipped: no cgroup per launch here'})`,
    async () => {
      const stateDir = tempDir('tv-kept-')
      // A daemonized grandchild (its own session): the process group's kill misses it, the cgroup's does not.
      const script = 'setsid sleep 300 & i=0; while :; do echo "tick $i"; i=$((i+1)); sleep 0.02; done'
      const started = await startDaemon(stateDir, {
        file: '/bin/sh',
        argv: ['-c', script],
        reapAfterMs: 1000,
      })
      const escaped = () =>
        readdirSync('/proc').filter((name) => {
          try {
            return readFileSync(`/proc/${name}/cmdline`, 'utf8') === 'sleep\u0000300\u0000'
          } catch {
            return false
          }
        })
      expect(await eventually(() => escaped().length > 0)).toBe(true)
      const leftBehind = escaped().map(Number)
      started.daemon.kill('SIGKILL')
      await new Promise((resolve) => started.daemon.once('exit', resolve))
      expect(
        await eventually(() => !alive(started.pid) && leftBehind.every((pid) => !alive(pid)), 10_000),
      ).toBe(true)
      expect(await eventually(() => !existsSync(started.dir), 10_000)).toBe(true)
    },
    30_000,
  )
})
