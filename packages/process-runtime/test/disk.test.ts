/** Issue 10.12: the state directory has a disk budget; what nothing refers to any more is pruned. */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { fixture, makeRuntime, tempDir, tool } from './helpers.js'

describe('the disk budget of the state directory', () => {
  it("prunes the spill files of processes nobody refers to, oldest first, never a live one's", () => {
    const stateDir = tempDir('tv-disk-')
    const out = execFileSync(
      process.execPath,
      ['--expose-gc', fixture('spill-host.mjs'), stateDir, String(1_000_000)],
      {
        encoding: 'utf8',
      },
    )
    const { files, bytes, kept } = JSON.parse(out) as { files: number; bytes: number; kept: boolean }
    // Nine tools spilled 300,000 bytes each; a budget of 1,000,000 keeps three at most.
    expect(bytes).toBeLessThanOrEqual(1_000_000)
    expect(files).toBeLessThanOrEqual(3)
    expect(kept).toBe(true)
  })

  it('prunes the directories of runs that ended, oldest first, at start', async () => {
    const stateDir = tempDir('tv-disk-')
    const runs = join(stateDir, 'runs')
    const old = ['1-1-1', '2-2-2', '3-3-3'].map((name, i) => {
      const dir = join(runs, name, 'spill')
      mkdirSync(dir, { recursive: true })
      writeFileSync(join(dir, 'x.stdout'), Buffer.alloc(400_000))
      writeFileSync(join(runs, name, 'closed.json'), '{}')
      const when = new Date(Date.now() - (3 - i) * 60_000)
      utimesSync(join(runs, name), when, when)
      return name
    })
    const runtime = makeRuntime({ stateDir, stateBytes: 900_000 })
    expect(readdirSync(runs).sort()).toEqual([...old.slice(1), runtime.runId].sort())
    expect(runtime.launchFacts().state).toMatchObject({ path: stateDir, budget: 900_000 })
    expect(runtime.launchFacts().state.bytes).toBeGreaterThanOrEqual(800_000)
  })

  it('prunes a link in runs/ as the link alone: what it points at is kept', () => {
    const stateDir = tempDir('tv-disk-')
    const runs = join(stateDir, 'runs')
    const outside = tempDir('tv-disk-outside-')
    writeFileSync(join(outside, 'precious'), Buffer.alloc(400_000))
    mkdirSync(runs, { recursive: true })
    symlinkSync(outside, join(runs, '9-9-9'))
    const runtime = makeRuntime({ stateDir, stateBytes: 300_000 })
    expect(readdirSync(runs)).toEqual([runtime.runId])
    expect(readdirSync(outside)).toEqual(['precious'])
  })

  it('removes a run directory that spilled nothing when the runtime closes', async () => {
    const stateDir = tempDir('tv-disk-')
    const runtime = makeRuntime({ stateDir })
    await runtime.start({ tool: tool('/usr/bin/true'), argv: [] }).exit
    const dir = join(stateDir, 'runs', runtime.runId)
    expect(existsSync(dir)).toBe(true)
    await runtime.dispose()
    expect(existsSync(dir)).toBe(false)
  })
})
