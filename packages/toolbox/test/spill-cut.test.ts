/**
 * Decision 0092 (F7 of the 2026-12-01 review): a spill file keeps a stream's first `spillBytes`
 * bytes at most. Every note that sends the model to the rest of the output says how much of it was
 * not kept, and why, instead of promising all of it.
 */
import { describe, expect, it } from 'vitest'
import { boxWith, compose, ctx, textOf, v2Tool } from './helpers.js'

/** The runtime keeps 4096 bytes of each stream in memory and spills at most 20000. */
const RUNTIME = { resultBytes: 4096, spillBytes: 20_000, tailBytes: 1024 }
const CUT = "80000 bytes past the first 20000 were not kept: the spill file's cap is 20000 bytes"

describe('past the spill cap (decision 0092)', () => {
  it('a cut chunks result says how much its spill file did not keep', async () => {
    const box = boxWith({ big: v2Tool('big', {}, 'head -c 100000 /dev/zero | tr "\\0" z') })
    const { tools } = await compose([box], {}, RUNTIME)
    const result = await tools.call('big', {}, ctx())
    const process = result.meta?.process as string
    expect(textOf(result).split('\n').at(-1)).toBe(
      `[output truncated: showing the first 4096 of 100000 bytes; read on with processes {"command":"output","process":"${process}","offset":4096}; ${CUT}]`,
    )
  })

  it('an events result that elided some says it too', async () => {
    const box = boxWith({
      lines: v2Tool(
        'lines',
        { process: { output: { framing: 'lines' } } },
        'head -c 100000 /dev/zero | tr "\\0" "z" | fold -w 99',
      ),
    })
    const { tools } = await compose([box], { resultBytes: 1000 }, RUNTIME)
    const result = await tools.call('lines', {}, ctx())
    expect(textOf(result).split('\n').at(-1)).toMatch(
      /^\[\d+ more events elided: an answer holds 1000 bytes at most; stdout is 101010 bytes, read it with processes \{"command":"output","process":"proc-\d+"\}; 81010 bytes past the first 20000 were not kept: the spill file's cap is 20000 bytes\]$/,
    )
  })

  it("a failure's tail offers what is kept, not all of it", async () => {
    const box = boxWith({ fails: v2Tool('fails', {}, 'head -c 100000 /dev/zero | tr "\\0" z; exit 3') })
    const { tools } = await compose([box], {}, RUNTIME)
    const result = await tools.call('fails', {}, ctx())
    const process = result.meta?.process as string
    expect(textOf(result).split('\n')[1]).toBe(
      `--- stdout (last 1024 of 100000 bytes; what is kept of it: processes {"command":"output","process":"${process}"}; ${CUT}) ---`,
    )
  })
})
