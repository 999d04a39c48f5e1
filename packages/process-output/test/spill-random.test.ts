import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { SpillingOutput } from '../src/internal/spilling-output.js'
import { tempDir } from './helpers.js'
import { generator, randomBytes } from './random.js'

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
})
