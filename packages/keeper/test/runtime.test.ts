import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { cgroupHost } from '@toolvisor/containment'
import { eventually, processesRunning } from '@toolvisor/test-kit'
import { afterEach, describe, expect, it } from 'vitest'
import { makeRuntime, tempDir } from '../../process-runtime/test/helpers.js'
import { Keepers, type KeptChild } from '../src/index.js'

/**
 * Kept processes through the runtime, as `serve` composes it (the fork server, a cgroup per launch
 * where the host has them): the runtime is a process of its own (`runtime-daemon.mjs`), killed with
 * kill -9 or disposed with keep; its watchdog and the next start on the same state directory must
 * leave the kept process running, in its cgroup, reported lost to nobody, for a daemon to re-adopt.
 */

const daemonScript = join(import.meta.dirname, 'runtime-daemon.mjs')
const ticker = [
  '-u',
  '-c',
  [
    'import sys, threading, time',
    'def tick():',
    '    n = 0',
    '    while True:',
    '        print(f"tick {n}", flush=True); n += 1; time.sleep(0.02)',
    'threading.Thread(target=tick, daemon=True).start()',
    'for line in sys.stdin:',
    '    if line.strip() == "quit": sys.exit(7)',
    '    print(f"echo: {line.strip()}", flush=True)',
  ].join('\n'),
]

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

async function startDaemon(stateDir: string): Promise<Started> {
  const daemon = spawn(process.execPath, [daemonScript, JSON.stringify({ stateDir, argv: ticker })], {
    stdio: ['pipe', 'pipe', 'inherit'],
  })
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

function alive(pid: number): boolean {
  try {
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ')
  } catch {
    return false
  }
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

  it('dispose with keep: the kept process runs on, the run closes cleanly, and a daemon re-adopts it', async () => {
    const stateDir = tempDir('tv-kept-')
    const started = await startDaemon(stateDir)
    started.daemon.stdin!.write('dispose\n')
    expect((await started.said.next()).value).toBe('disposed')
    await new Promise((resolve) => started.daemon.once('exit', resolve))
    // Closed cleanly (its directory removed, having spilled nothing): nothing of it is reported lost.
    const runDir = join(stateDir, 'runs', started.runId)
    expect(existsSync(join(runDir, 'owner.json'))).toBe(false)
    expect(await eventually(() => processesRunning(`watchdog.js ${runDir}`).length === 0)).toBe(true)
    expect(alive(started.pid)).toBe(true)
    const next = makeRuntime({ stateDir, orphanGraceMs: 0 })
    expect(next.lost()).toEqual([])
    await adoptAndEnd(stateDir, started)
  })
})
