/**
 * F7 of the 2026-12-01 review: the disk budget (`stateBytes`) never counted the spill file of a
 * running process, or of one a result still refers to, and a spill had no cap. Each stream's spill
 * now stops at its cap (`spillBytes`), and live spills count against the budget: when it is spent,
 * a stream's spill is cut there and says so, rather than growing past it.
 */
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { makeRuntime, tempDir, tool } from './helpers.js'

const sh = tool('/bin/sh')

function spillBytes(stateDir: string, runId: string): number {
  const dir = join(stateDir, 'runs', runId, 'spill')
  return readdirSync(dir).reduce((sum, name) => sum + statSync(join(dir, name)).size, 0)
}

describe('F7: spill files are bounded', () => {
  it("a stream that grows past what is left of the state directory's budget is cut there; the next spill gets nothing", async () => {
    const stateDir = tempDir('tv-f7-')
    const budget = 1_000_000
    const runtime = makeRuntime({ stateDir, stateBytes: budget, resultBytes: 1024 })
    // A running stream, then finished and still referred to (held here): both count.
    const first = runtime.start({ tool: sh, argv: ['-c', 'head -c 3000000 /dev/zero'] })
    expect(await first.exit).toMatchObject({ code: 0 })
    expect(spillBytes(stateDir, runtime.runId)).toBeLessThanOrEqual(budget)
    expect(first.output.stdout()).toMatchObject({
      totalBytes: 3_000_000,
      spillCut: { why: 'budget', bound: budget },
    })
    const next = runtime.start({ tool: sh, argv: ['-c', 'head -c 50000 /dev/zero'] })
    expect(await next.exit).toMatchObject({ code: 0 })
    expect(next.output.stdout()).toMatchObject({
      totalBytes: 50_000,
      spillCut: { kept: 0, why: 'budget', bound: budget },
    })
    expect(spillBytes(stateDir, runtime.runId)).toBeLessThanOrEqual(budget)
    expect(first.output.stdout().spillCut!.kept + next.output.stdout().spillCut!.kept).toBeLessThanOrEqual(
      budget,
    )
  })

  it('a stream past its spillBytes cap keeps its first bytes on disk, and its newest in memory', async () => {
    const stateDir = tempDir('tv-f7-')
    const runtime = makeRuntime({ stateDir, spillBytes: 100_000, resultBytes: 1024, tailBytes: 4096 })
    const proc = runtime.start({ tool: sh, argv: ['-c', 'seq 1 100000'] })
    expect(await proc.exit).toMatchObject({ code: 0 })
    const all = Buffer.from(`${Array.from({ length: 100_000 }, (_, i) => i + 1).join('\n')}\n`)
    expect(spillBytes(stateDir, runtime.runId)).toBe(100_000)
    expect(proc.output.stdout()).toMatchObject({
      totalBytes: all.length,
      truncated: true,
      spillCut: { kept: 100_000, why: 'cap', bound: 100_000 },
    })
    expect(proc.output.bytes('stdout', 99_990, 10).equals(all.subarray(99_990, 100_000))).toBe(true)
    // Past the cap and before the tail: not kept anywhere.
    expect(proc.output.bytes('stdout', 100_000, 10).length).toBe(0)
    expect(proc.output.bytes('stdout', 300_000, 10).length).toBe(0)
    // The newest bytes, from the tail in memory.
    expect(proc.output.bytes('stdout', all.length - 100, 100).equals(all.subarray(all.length - 100))).toBe(
      true,
    )
  })
})
