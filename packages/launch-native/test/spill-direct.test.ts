// The spill file written past the page cache (spill-direct.ts, decision 0084): every byte in order,
// every read right while bytes are still in memory, the file whole once drained and closed, a quiet
// stream's last bytes in the file without a close, the exit told only once the file is whole.
import { spawnSync } from 'node:child_process'
import { pbkdf2 } from 'node:crypto'
import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { eventually } from '@toolvisor/process-runtime/testing'
import { describe, expect, it } from 'vitest'
import { SpillingOutput } from '../../process-output/src/internal/spilling-output.js'
import { STAGE, StagedWriter } from '../src/internal/spill-direct.js'
import { generator, makeRuntime, randomBytes, tempDir, tool } from './helpers.js'

/** Appends `data` in random pieces (1 byte to 300 KiB), reading back at random as it goes. */
function feed(output: SpillingOutput, data: Buffer, random: () => number, where: string): void {
  const check = () => {
    const offset = Math.floor(random() * (output.total + 10))
    const length = Math.floor(random() * 3 * STAGE)
    const want = data.subarray(0, output.total).subarray(offset, offset + length)
    expect(output.read(offset, length).equals(want), `${where}, read ${offset}+${length}`).toBe(true)
  }
  for (let at = 0; at < data.length; ) {
    const size = random() < 0.3 ? 1 + Math.floor(random() * 64) : 1 + Math.floor(random() * 300 * 1024)
    output.append(data.subarray(at, at + size))
    at += size
    if (random() < 0.05) check()
  }
  check()
}

/** The O_DIRECT stages, as `nativeSpawner` gives a bulk stdout's spill. */
const stages = (fd: number) => StagedWriter.open(fd)

describe('the spill file written past the page cache', () => {
  it('holds every byte in order; reads are right while bytes wait in memory (40 seeds, up to 6 MiB)', async () => {
    const dir = tempDir('tv-spill-direct-')
    for (let seed = 1; seed <= 40; seed++) {
      const random = generator(seed)
      const data = randomBytes(random, Math.floor(random() * 6 * STAGE))
      const limit = [0, 1, 4096, 256 * 1024][seed % 4]!
      const spillPath = join(dir, `${seed}.out`)
      const output = new SpillingOutput({ limit, tailBytes: 4096, spill: spillPath, stages })
      const where = `seed ${seed} (${data.length} bytes, limit ${limit})`
      feed(output, data, random, where)
      await output.drained()
      output.close()
      if (data.length > limit) expect(readFileSync(spillPath).equals(data), where).toBe(true)
      expect(output.spillError, where).toBeUndefined()
      expect(output.compact(), where).toBe(true)
      const offset = Math.floor(random() * data.length)
      expect(output.read(offset, STAGE).equals(data.subarray(offset, offset + STAGE)), where).toBe(true)
    }
  })

  it('puts a quiet stream’s last bytes in the file without a close, and at once when asked', async () => {
    const dir = tempDir('tv-spill-direct-')
    const data = randomBytes(generator(7), STAGE + 1000)
    const quiet = new SpillingOutput({
      limit: 0,
      tailBytes: 100,
      spill: join(dir, 'quiet'),
      stages,
    })
    quiet.append(data)
    // The full stage lands on its own, then the 1,000 bytes after it once the stream stayed quiet.
    expect(await eventually(() => statSync(join(dir, 'quiet')).size === data.length)).toBe(true)
    expect(readFileSync(join(dir, 'quiet')).equals(data)).toBe(true)
    const asked = new SpillingOutput({
      limit: 0,
      tailBytes: 100,
      spill: join(dir, 'asked'),
      stages,
    })
    asked.append(data.subarray(0, 1000))
    asked.flush()
    expect(readFileSync(join(dir, 'asked')).equals(data.subarray(0, 1000))).toBe(true)
    quiet.close()
    asked.close()
  })

  it('keeps every byte with more streams than stages: the rest wait or write as before', async () => {
    const dir = tempDir('tv-spill-direct-')
    const random = generator(99)
    const streams = Array.from({ length: 40 }, (_, i) => ({
      data: randomBytes(random, 2 * STAGE + Math.floor(random() * STAGE)),
      output: new SpillingOutput({ limit: 0, tailBytes: 100, spill: join(dir, `${i}`), stages }),
      at: 0,
    }))
    // Interleaved, as concurrent tools would be read: every stream holds a stage while it spills.
    while (streams.some((s) => s.at < s.data.length)) {
      for (const stream of streams) {
        const piece = stream.data.subarray(stream.at, stream.at + 256 * 1024)
        stream.output.append(piece)
        stream.at += piece.length
      }
    }
    for (const [i, { data, output }] of streams.entries()) {
      expect(output.read(0, data.length).equals(data), `stream ${i}`).toBe(true)
      await output.drained()
      output.close()
      expect(readFileSync(join(dir, `${i}`)).equals(data), `stream ${i}`).toBe(true)
    }
  })

  it('holds at most 4 MiB for a stream ahead of the disk: past 3 stages in flight it writes at once', async () => {
    const file = join(tempDir('tv-spill-direct-'), 'out')
    const output = new SpillingOutput({ limit: 0, tailBytes: 1, spill: file, stages })
    const data = randomBytes(generator(3), 20 * STAGE)
    let most = 0
    // One synchronous loop: no write in flight can land meanwhile.
    for (let at = 0; at < data.length; at += 256 * 1024) {
      output.append(data.subarray(at, at + 256 * 1024))
      most = Math.max(most, output.heldBytes)
    }
    expect(most).toBeLessThanOrEqual(4 * STAGE + 256 * 1024)
    await output.drained()
    output.close()
    expect(readFileSync(file).equals(data)).toBe(true)
  })

  it('tells a chunks tool’s exit only once its spill file holds all of it', async () => {
    const runtime = makeRuntime({ resultBytes: 0 })
    const dir = tempDir('tv-spill-direct-')
    const copy = join(dir, 'copy')
    const total = 40 * STAGE
    // libuv's pool (4 threads) kept busy from 2 MiB before the end: the last staged writes wait
    // for a thread while the tool ends, so an exit told before they landed finds the file short.
    let busy: Promise<unknown> | undefined
    let seen = 0
    const proc = runtime.start({
      tool: tool('/bin/sh', { process: { mode: 'stream', output: { framing: 'chunks' } } }),
      argv: ['-c', `head -c ${total} /dev/urandom | tee ${copy}`],
      onEvent: (event) => {
        seen += (event.value as Buffer).length
        if (seen < total - 2 * STAGE || busy) return
        const work = () => new Promise((done) => pbkdf2('x', 'y', 300_000, 32, 'sha256', done))
        busy = Promise.all([work(), work(), work(), work()])
      },
    })
    await proc.exit
    const atExit = statSync(proc.output.stdout().spillPath!).size
    await busy
    expect((await proc.exit).code).toBe(0)
    expect(atExit).toBe(total)
    expect(readFileSync(proc.output.stdout().spillPath!).equals(readFileSync(copy))).toBe(true)
  })

  it('writes as before where there is no WebAssembly for its stages (node --jitless)', () => {
    const file = join(tempDir('tv-spill-direct-'), 'out')
    const script = `
      import { readFileSync } from 'node:fs'
      import { SpillingOutput } from ${JSON.stringify(new URL('../../process-output/dist/internal/spilling-output.js', import.meta.url).href)}
      import { StagedWriter } from ${JSON.stringify(new URL('../dist/internal/spill-direct.js', import.meta.url).href)}
      const data = Buffer.alloc(3 * 1024 * 1024 + 5).map((_, i) => i % 251)
      const output = new SpillingOutput({ limit: 10, tailBytes: 10, spill: ${JSON.stringify(file)}, stages: (fd) => StagedWriter.open(fd) })
      for (let at = 0; at < data.length; at += 70_000) output.append(data.subarray(at, at + 70_000))
      await output.drained()
      output.close()
      console.log(typeof WebAssembly, readFileSync(${JSON.stringify(file)}).equals(data), String(output.spillError))`
    const run = spawnSync(process.execPath, ['--jitless', '--input-type=module', '-e', script], {
      encoding: 'utf8',
    })
    expect(run.stdout.trim(), run.stderr).toBe('undefined true undefined')
  })
})
