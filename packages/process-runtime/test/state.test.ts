import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { describe, expect, it } from 'vitest'
import { createTaskRegistry, markedProcesses } from '../src/index.js'
import { eventually, processesRunning } from '../src/testing.js'
import { fixture, makeRuntime, sleep, tempDir, tool } from './helpers.js'

const trueTool = tool('/usr/bin/true')

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

    const next = makeRuntime({ stateDir })
    expect(next.lost()).toHaveLength(10)
    expect(next.lost()[0]).toMatchObject({ tool: 'stubborn', session: 'session-a', task: 't1', killed: 0 })
    const tasks = createTaskRegistry(next)
    const mine = tasks.list('session-a')
    expect(mine.map((t) => t.id)).toEqual(['t1', 't3', 't5', 't7', 't9'])
    expect(mine[0]!.lifecycle).toEqual({ status: 'failed', why: 'lost on restart' })
    expect(mine[0]!.kind).toBe('stream')
    // Each lost task is its owner's alone: another session (or none) sees nothing of it.
    expect(tasks.list('session-c')).toEqual([])
    expect(tasks.list(undefined)).toEqual([])
    // New ids continue past the lost ones, and a chosen id that is taken is refused before
    // anything is started (issue 10.1).
    const started: string[] = []
    const start = () => {
      started.push('x')
      return next.start({ tool: trueTool, argv: [] })
    }
    const fresh = tasks.add({ kind: 'stream', tool: 'true', owner: 'session-a', start })
    expect(fresh.id).toBe('t11')
    expect(() => tasks.add({ kind: 'bash', tool: 'true', owner: 'session-b', id: 't1', start })).toThrow(
      "task id t1 is taken by another session's task; nothing was started",
    )
    expect(started).toHaveLength(1)
    await tasks.wait(fresh.id, 'session-a', 5000)
    // Its owner may name a new task after a lost one (a background shell's name is reused once
    // its task ended, and a lost one ended): the lost record stays in the state directory.
    const renamed = tasks.add({ kind: 'bash', tool: 'true', owner: 'session-a', id: 't1', start })
    expect([renamed.id, started.length]).toEqual(['t1', 2])
    expect(['starting', 'running']).toContain(renamed.lifecycle.status)
    await tasks.wait('t1', 'session-a', 5000)
    // Found once: a third start finds nothing more, but the state directory keeps what was lost,
    // so the owner still sees its lost tasks when it comes back to a later run (and the operator
    // in check --probe), and no other session does.
    const third = makeRuntime({ stateDir })
    expect(third.lost()).toEqual([])
    expect(third.keptLost()).toHaveLength(10)
    expect(third.keptLost()[0]!.reportedAt).toMatch(/^\d{4}-\d\d-\d\dT/)
    const later = createTaskRegistry(third)
    expect(later.list('session-a').map((t) => [t.id, t.lifecycle])).toEqual(
      ['t1', 't3', 't5', 't7', 't9'].map((id) => [id, { status: 'failed', why: 'lost on restart' }]),
    )
    expect(later.list('session-c')).toEqual([])
    expect(later.add({ kind: 'stream', tool: 'true', owner: 'session-a', start }).id).toBe('t11')
    await later.wait('t11', 'session-a', 5000)
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
})
