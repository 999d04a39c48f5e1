/** A run's directory, its log and what the next start makes of a run that died (decisions 0092, 0097). */
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { procStat } from '@toolvisor/containment'
import { describe, expect, it } from 'vitest'
import { keptLost, MARKER_VARIABLE, markTold, RunState } from '../src/index.js'
import { deadRun } from '../src/testing.js'
import { onCleanup, tempDir } from './helpers.js'

const WEEK_MS = 7 * 24 * 3600_000

/**
 * A sleeper of its own group carrying `marker` (what a launch of a run would be), once it runs (its
 * exec done: before it, /proc shows the test's own environment), and its end.
 */
async function sleeper(marker: string): Promise<{ pid: number; ended: Promise<NodeJS.Signals | null> }> {
  const child = spawn('sleep', ['60'], {
    detached: true,
    stdio: 'ignore',
    env: { [MARKER_VARIABLE]: marker },
  })
  const ended = new Promise<NodeJS.Signals | null>((resolve) =>
    child.once('exit', (_code, signal) => resolve(signal)),
  )
  await new Promise((resolve) => child.once('spawn', resolve))
  onCleanup(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL')
    } catch {
      // ended already
    }
  })
  return { pid: child.pid!, ended }
}

describe("a run's directory", () => {
  it('records its owner and launches, is marked closed, and goes when it spilled nothing', () => {
    const stateDir = tempDir()
    const state = RunState.open(stateDir, WEEK_MS)
    expect(state.dir).toBe(join(stateDir, 'runs', state.runId))
    expect(statSync(state.dir).mode & 0o777).toBe(0o700)
    expect(JSON.parse(readFileSync(join(state.dir, 'owner.json'), 'utf8'))).toMatchObject({
      pid: process.pid,
    })
    state.launching('proc-1', 'echo')
    state.track('proc-1', 4242, 'echo')
    state.annotate('proc-1', { task: 't1', session: 's1', kind: 'stream' })
    state.untrack('proc-1')
    expect(state.marker('proc-1')).toBe(`${state.runId}/proc-1`)
    const log = readFileSync(join(state.dir, 'processes.log'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(log.map((record) => record.op)).toEqual(['+', '+', '@', '-'])
    expect(log[1]).toMatchObject({ id: 'proc-1', pid: 4242, tool: 'echo' })
    state.close()
    expect(existsSync(join(state.dir, 'closed.json'))).toBe(true)
    expect(existsSync(join(state.dir, 'owner.json'))).toBe(false)
    state.removeIfEmpty()
    expect(existsSync(state.dir)).toBe(false)
  })

  it('keeps a run that spilled, and writes through the directory it made, not a link put at its path', () => {
    const stateDir = tempDir()
    const state = RunState.open(stateDir, WEEK_MS)
    state.spill.write('proc-1.stdout', 'spilled')
    const moved = `${state.dir}.moved`
    const elsewhere = tempDir('tv-elsewhere-')
    renameSync(state.dir, moved)
    symlinkSync(elsewhere, state.dir)
    state.note('cgroups.json', '{"dirs":[]}')
    expect(readdirSync(elsewhere)).toEqual([])
    expect(readFileSync(join(moved, 'cgroups.json'), 'utf8')).toBe('{"dirs":[]}')
    state.close()
    state.removeIfEmpty()
    expect(readFileSync(join(moved, 'spill', 'proc-1.stdout'), 'utf8')).toBe('spilled')
  })
})

describe('a run that died', () => {
  it('is found by the next start: what it still ran is killed by its marker, reported lost once, its placeholder removed', async () => {
    const stateDir = tempDir()
    const run = '1-1-1-dead'
    const { pid, ended } = await sleeper(`${run}/proc-1`)
    const placeholder = join(tempDir('tv-placeholder-'), 'masked')
    mkdirSync(placeholder)
    deadRun(stateDir, run, [
      { op: '+', id: 'proc-1', pid, start: '', tool: 'server', at: '2026-12-06T00:00:00.000Z' },
      { op: 'h', id: 'proc-1', path: placeholder, kind: 'dir' },
      { op: '@', id: 'proc-1', task: 't1', session: 's1', kind: 'service' },
      { op: '+', id: 'proc-2', pid: 2 ** 22 + 2, start: '', tool: 'done', at: '2026-12-06T00:00:01.000Z' },
      { op: '-', id: 'proc-2' },
    ])
    const state = RunState.open(stateDir, WEEK_MS)
    onCleanup(() => state.close())
    expect(state.lost).toEqual([
      expect.objectContaining({
        id: 'proc-1',
        run,
        tool: 'server',
        task: 't1',
        session: 's1',
        kind: 'service',
        killed: 1,
      }),
    ])
    expect(await ended).toBe('SIGKILL')
    expect(existsSync(placeholder)).toBe(false)
    // Reported once: the next start finds the run closed, and the loss kept until its session is told.
    const next = RunState.open(stateDir, WEEK_MS)
    onCleanup(() => next.close())
    expect(next.lost).toEqual([])
    expect(keptLost(stateDir)).toEqual([expect.objectContaining({ id: 'proc-1', run })])
    markTold(stateDir, { run, id: 'proc-1' })
    expect(keptLost(stateDir)).toEqual([expect.objectContaining({ id: 'proc-1', told: true })])
  })

  it('leaves a run whose owner is alive (another toolvisor) alone', async () => {
    const stateDir = tempDir()
    const other = RunState.open(stateDir, WEEK_MS)
    onCleanup(() => other.close())
    const { pid } = await sleeper(`${other.runId}/proc-1`)
    other.track('proc-1', pid, 'sleep')
    const state = RunState.open(stateDir, WEEK_MS)
    onCleanup(() => state.close())
    expect(state.lost).toEqual([])
    expect(procStat(pid)?.state).not.toBe('Z')
    expect(procStat(pid)).toBeDefined()
    expect(existsSync(join(other.dir, 'owner.json'))).toBe(true)
  })
})
