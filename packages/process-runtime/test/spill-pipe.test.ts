import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { makeRuntime, output, tool } from './helpers.js'

describe('the spill file of a process, for random chunk boundaries and sizes', () => {
  it('through a real pipe: a producer writing random sizes, under chunks and lines framing alike', async () => {
    const runtime = makeRuntime({ resultBytes: 64 * 1024 })
    // The producer writes the same pseudo-random stream the test computes (sha256 of a counter,
    // newlines included), in writes of random sizes, so the pipe cuts it anywhere.
    const producer = `
      const { createHash } = require('node:crypto')
      const seed = Number(process.argv[1]); const total = Number(process.argv[2])
      let block = 0; let pending = Buffer.alloc(0); let out = 0; let state = seed
      const next = () => { state = (state * 1103515245 + 12345) % 2147483648; return state / 2147483648 }
      function more() {
        while (out < total) {
          if (pending.length < 150000) {
            const digests = [pending]
            for (let i = 0; i < 10000; i++) digests.push(createHash('sha256').update(seed + ':' + block++).digest())
            pending = Buffer.concat(digests)
          }
          const size = Math.min(total - out, 1 + Math.floor(next() * 150000))
          const piece = pending.subarray(0, size); pending = pending.subarray(size); out += size
          if (!process.stdout.write(piece)) return process.stdout.once('drain', more)
        }
      }
      more()`
    const expected = (seed: number, total: number) => {
      const blocks: Buffer[] = []
      for (let block = 0, length = 0; length < total; block++) {
        const digest = createHash('sha256').update(`${seed}:${block}`).digest()
        blocks.push(digest)
        length += digest.length
      }
      return Buffer.concat(blocks).subarray(0, total)
    }
    for (const [seed, framing] of [
      [7, 'chunks'],
      [8, 'lines'],
      [9, 'chunks'],
    ] as const) {
      const total = 3 * 1024 * 1024 + seed * 1013
      const proc = runtime.start({
        tool: tool(process.execPath, { process: { mode: 'stream', output: output(framing) } }),
        argv: ['-e', producer, String(seed), String(total)],
      })
      const exit = await proc.exit
      expect(exit.code, `seed ${seed}`).toBe(0)
      const out = proc.output.stdout()
      expect(out.totalBytes, `seed ${seed}`).toBe(total)
      expect(readFileSync(out.spillPath!).equals(expected(seed, total)), `seed ${seed}, ${framing}`).toBe(
        true,
      )
    }
  })
})
