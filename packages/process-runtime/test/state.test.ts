import { spawn } from 'node:child_process'
import { chmodSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { procStat } from '@toolvisor/containment'
import { describe, expect, it } from 'vitest'
import { createLaunchers, markedProcesses, Runtime } from '../src/index.js'
import { deadRun, eventually, processesRunning } from '../src/testing.js'
import { fixture, makeRuntime, sleep, tempDir } from './helpers.js'

/** A fixture hosting a runtime that starts `count` tools, once it said `ready <runId>`. */
async function host(name: string, stateDir: string, count: number, ...rest: string[]) {
  const child = spawn(process.execPath, [fixture(name), stateDir, String(count), ...rest], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve)
    child.once('exit', (code) => reject(new Error(`host exited ${code}`)))
  })
  return { child, runId: line.replace(/^ready /, '') }
}

describe('when the runtime dies', () => {
  it('kills what it launched even before it learned their pids (a launch under way is in the log)', async () => {
    const { child, runId } = await host('busy-host.mjs', tempDir('tv-crash-busy-'), 5)
    try {
      // Forked and running (each with its grandchildren), the host's loop blocked all along.
      expect(await eventually(() => markedProcesses(runId).length >= 15)).toBe(true)
    } finally {
      child.kill('SIGKILL')
    }
    expect(await eventually(() => markedProcesses(runId).length === 0, 3000)).toBe(true)
  })

  it('kills what a tool forks while the dead run is being scanned (a loop starting a sleep every 20 ms)', async () => {
    const { child, runId } = await host('busy-host.mjs', tempDir('tv-crash-forker-'), 2, fixture('forker.sh'))
    try {
      expect(await eventually(() => markedProcesses(runId).length >= 20)).toBe(true)
    } finally {
      child.kill('SIGKILL')
    }
    // Each `sleep 30` a single scan missed would outlive this by half a minute.
    expect(await eventually(() => markedProcesses(runId).length === 0, 3000)).toBe(true)
  })

  it('leaves no tool process running a second after a SIGKILL, and the next start reports them lost', async () => {
    const stateDir = tempDir('tv-crash-')
    const { child, runId } = await host('host.mjs', stateDir, 10)
    // 10 tools, each with a shell and two grandchildren.
    expect(markedProcesses(runId).length).toBeGreaterThanOrEqual(30)
    child.kill('SIGKILL')
    const killedAt = Date.now()
    while (markedProcesses(runId).length > 0 && Date.now() - killedAt < 3000) await sleep(20)
    const took = Date.now() - killedAt
    expect(markedProcesses(runId)).toEqual([])
    expect(took).toBeLessThan(1000)
    // Reaped, not only killed: a process still tearing down (threads, memory) counts as the run's
    // live owner, and a live owner's run is not recovered.
    if (child.exitCode === null && child.signalCode === null) await new Promise((r) => child.once('exit', r))

    const next = makeRuntime({ stateDir })
    expect(next.lost()).toHaveLength(10)
    expect(next.lost()[0]).toMatchObject({ tool: 'stubborn', session: 'session-a', task: 't1', killed: 0 })
    // Found once: a third start finds nothing more, but the state directory keeps what was lost
    // (its owner's registry lists it on a later run: the tasks package's lost.test.ts; the
    // operator's check --probe).
    const third = makeRuntime({ stateDir })
    expect(third.lost()).toEqual([])
    expect(third.keptLost()).toHaveLength(10)
    expect(third.keptLost()[0]!.reportedAt).toMatch(/^\d{4}-\d\d-\d\dT/)
  })

  it('kills leftovers of a dead run that its watchdog could not reach, at the next start', async () => {
    const stateDir = tempDir('tv-leftover-')
    const host = spawn(process.execPath, [fixture('host.mjs'), stateDir, '2'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    const line = await new Promise<string>((resolve) =>
      createInterface({ input: host.stdout! }).once('line', resolve),
    )
    const runId = line.replace(/^ready /, '')
    // Kill the watchdog first (it is the only other process with this run dir in its argv), then the host.
    const watchdogs = processesRunning(runId)
    expect(watchdogs.length).toBe(1)
    for (const pid of watchdogs) process.kill(pid, 'SIGKILL')
    const hostGone = new Promise((resolve) => host.once('exit', resolve))
    host.kill('SIGKILL')
    await hostGone
    expect(await eventually(() => processesRunning(runId).length === 0)).toBe(true)
    // Nothing is left to kill them: they run on until the next start.
    expect(markedProcesses(runId).length).toBeGreaterThan(0)
    const next = makeRuntime({ stateDir })
    expect(next.lost().map((p) => p.killed > 0)).toEqual([true, true])
    expect(await eventually(() => markedProcesses(runId).length === 0)).toBe(true)
  })

  it('never kills a process that merely has the pid a dead run recorded', async () => {
    const stateDir = tempDir('tv-reuse-')
    const stranger = spawn('sleep', ['30'], { stdio: 'ignore', detached: true })
    const unmarked = spawn('sleep', ['30'], { stdio: 'ignore', detached: true })
    try {
      expect(await eventually(() => procStat(stranger.pid!) !== undefined)).toBe(true)
      const start = procStat(stranger.pid!)!.startTime
      const at = new Date().toISOString()
      deadRun(stateDir, 'dead-2', [
        // The same pid, another start time: a later process that reuses the pid.
        { op: '+', id: 'proc-1', pid: stranger.pid, start: String(Number(start) - 1), tool: 'a', at },
        // No start time recorded yet: only the run's marker in its environment would make it ours.
        { op: '+', id: 'proc-2', pid: unmarked.pid, start: '', tool: 'b', at },
      ])
      const runtime = makeRuntime({ stateDir })
      expect(runtime.lost().map((p) => [p.id, p.killed])).toEqual([
        ['proc-1', 0],
        ['proc-2', 0],
      ])
      expect(procStat(stranger.pid!)?.state).not.toBe('Z')
      expect(procStat(unmarked.pid!)?.state).not.toBe('Z')
      expect(stranger.exitCode ?? stranger.signalCode).toBeNull()
      expect(unmarked.exitCode ?? unmarked.signalCode).toBeNull()
    } finally {
      stranger.kill('SIGKILL')
      unmarked.kill('SIGKILL')
    }
  })
})

describe('the state directory (decision 0092; its checks are tested in @toolvisor/run-state)', () => {
  it('refuses, at the start of a runtime, with RUNTIME_ERR_STATE_DIR', () => {
    const stateDir = tempDir('tv-trust-')
    chmodSync(stateDir, 0o757)
    expect(() => new Runtime({ stateDir }, createLaunchers())).toThrow(
      expect.objectContaining({ code: 'RUNTIME_ERR_STATE_DIR' }),
    )
  })
})
