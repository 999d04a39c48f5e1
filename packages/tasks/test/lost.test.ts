import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { markedProcesses } from '@toolvisor/process-runtime'
import { eventually, preparedTool } from '@toolvisor/process-runtime/testing'
import { describe, expect, it } from 'vitest'
import { createTaskRegistry } from '../src/index.js'
import { fixture, makeRuntime, tempDir } from './helpers.js'

const trueTool = preparedTool('/usr/bin/true')

/** Starts the hosting fixture with `count` tasks, waits for its `ready <runId>`, and kills it -9. */
async function killedHost(stateDir: string, count: number): Promise<string> {
  const child = spawn(process.execPath, [fixture('host.mjs'), stateDir, String(count)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve)
    child.once('exit', (code) => reject(new Error(`host exited ${code}`)))
  })
  const runId = line.replace(/^ready /, '')
  // Reaped, not only killed: a process still tearing down (threads, memory) counts as the run's
  // live owner, and a live owner's run is not recovered.
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGKILL')
  await exited
  expect(await eventually(() => markedProcesses(runId).length === 0, 3000)).toBe(true)
  return runId
}

describe('tasks a killed run lost', () => {
  it('are their owner’s alone, ids go on past them, a taken id is refused, and they stay listed across restarts', async () => {
    const stateDir = tempDir('tv-crash-')
    await killedHost(stateDir, 10)
    const next = makeRuntime({ stateDir })
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
    // Found once, but kept: the owner still sees its lost tasks when it comes back to a later
    // run, and no other session does.
    const third = makeRuntime({ stateDir })
    expect(third.lost()).toEqual([])
    const later = createTaskRegistry(third)
    expect(later.list('session-a').map((t) => [t.id, t.lifecycle])).toEqual(
      ['t1', 't3', 't5', 't7', 't9'].map((id) => [id, { status: 'failed', why: 'lost on restart' }]),
    )
    expect(later.list('session-c')).toEqual([])
    expect(later.add({ kind: 'stream', tool: 'true', owner: 'session-a', start }).id).toBe('t11')
    await later.wait('t11', 'session-a', 5000)
  })
})
