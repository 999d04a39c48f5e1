import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { SpillingOutput } from '../src/internal/output.js'
import { generator, makeRuntime, output, randomBytes, tempDir, tool } from './helpers.js'

/** Random cut points: chunk sizes from 1 byte to 200 KiB, some of them empty. */
function cut(random: () => number, data: Buffer): Buffer[] {
  const chunks: Buffer[] = []
  for (let at = 0; at < data.length; ) {
    const shape = random()
    const size =
      shape < 0.05 ? 0 : shape < 0.4 ? 1 + Math.floor(random() * 64) : 1 + Math.floor(random() * 200 * 1024)
    chunks.push(data.subarray(at, at + size))
    at += size
  }
  return chunks
}

describe('the spill file, for random chunk boundaries and sizes', () => {
  it('holds every byte in order, and every read of it equals the producer output (300 seeds)', () => {
    const dir = tempDir('tv-spill-random-')
    for (let seed = 1; seed <= 300; seed++) {
      const random = generator(seed)
      const data = randomBytes(random, Math.floor(random() * 1.5 * 1024 * 1024))
      const limit = [0, 1, 4096, 256 * 1024, Math.floor(random() * data.length)][seed % 5]!
      const tailBytes = 1 + Math.floor(random() * 8192)
      const spillPath = join(dir, `${seed}.out`)
      const output = new SpillingOutput({ limit, tailBytes, spill: spillPath })
      const where = `seed ${seed} (${data.length} bytes, limit ${limit})`
      // Reads while the stream grows, and after it ended.
      const reads = () => {
        for (let i = 0; i < 5; i++) {
          const offset = Math.floor(random() * (data.length + 10))
          const length = Math.floor(random() * 300 * 1024)
          const want = data.subarray(0, output.total).subarray(offset, offset + length)
          expect(output.read(offset, length).equals(want), `${where}, read ${offset}+${length}`).toBe(true)
        }
      }
      for (const chunk of cut(random, data)) {
        output.append(chunk)
        if (random() < 0.02) reads()
      }
      reads()
      output.close()
      expect(output.total, where).toBe(data.length)
      expect(output.head().equals(data.subarray(0, limit)), where).toBe(true)
      expect(output.tail().equals(data.subarray(Math.max(0, data.length - tailBytes))), where).toBe(true)
      if (data.length > limit) expect(readFileSync(spillPath).equals(data), where).toBe(true)
      else expect(output.spillPath, where).toBeUndefined()
      reads()
      // Compacted (a finished process past the retention budget), reads come from the file alone.
      expect(output.compact(), where).toBe(true)
      const offset = Math.floor(random() * data.length)
      expect(output.read(offset, 100_000).equals(data.subarray(offset, offset + 100_000)), where).toBe(true)
    }
  })

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
