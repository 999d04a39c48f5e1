import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { eventually } from '@toolvisor/process-runtime/testing'
import { afterEach, describe, expect, it } from 'vitest'
import { ForkServer } from '../src/fork-server.js'
import { MAX_SLAB, MIN_SLAB, SlabReader } from '../src/internal/slab-reader.js'
import { builtForkServer } from '../src/native-spawner.js'
import { makeRuntime, output, tempDir, tool } from './helpers.js'

const servers: ForkServer[] = []
afterEach(() => {
  for (const server of servers.splice(0)) server.close()
})

/** A read of `n` bytes (at most what is offered) into the reader's next buffer, all of them `mark`. */
function read(reader: SlabReader, n: number, mark: number): { offered: Buffer; chunk: Buffer } {
  const offered = reader.next()
  const take = Math.min(n, offered.length)
  offered.fill(mark, 0, take)
  return { offered, chunk: reader.took(take, offered) }
}

describe('the slab reader', () => {
  it('puts big reads one after another in a slab, grows slabs while reads fill them, copies small reads', () => {
    const reader = new SlabReader()
    expect(reader.next().length).toBe(MIN_SLAB)
    // Reads that fill what they are offered: the producer is ahead, slabs double up to MAX_SLAB.
    const reads = Array.from({ length: 24 }, (_, i) => read(reader, Number.MAX_SAFE_INTEGER, i))
    const offered = reads.map((r) => r.offered.length)
    expect(Math.max(...offered)).toBe(MAX_SLAB)
    expect(offered.every((size) => size >= MIN_SLAB && size <= MAX_SLAB)).toBe(true)
    // Chunks are views of their slab, each one keeps its own bytes.
    expect(reads.every((r, i) => r.chunk.every((byte) => byte === i))).toBe(true)
    // Two reads into one slab sit one after the other in it.
    const a = read(reader, 100 * 1024, 200)
    const b = read(reader, 100 * 1024, 201)
    expect(b.chunk.buffer).toBe(a.chunk.buffer)
    expect(b.chunk.byteOffset).toBe(a.chunk.byteOffset + 100 * 1024)
    // A small read is copied out (it pins no slab) and says the producer is not ahead: the next
    // read gets a small slab, offered again after every small read.
    const small = read(reader, 100, 202)
    expect(small.chunk.buffer).not.toBe(small.offered.buffer)
    expect(small.chunk.buffer.byteLength).toBe(100)
    expect([...small.chunk]).toEqual(Array(100).fill(202))
    const waiting = reader.next()
    expect(waiting.length).toBe(MIN_SLAB)
    const again = read(reader, 10, 203).offered
    expect([again.buffer, again.byteOffset]).toEqual([waiting.buffer, waiting.byteOffset])
    expect(reader.next().buffer).toBe(waiting.buffer)
  })

  it('reads a real producer into growing slabs while it is ahead, every byte in order, in events and spill file', async () => {
    const runtime = makeRuntime({ resultBytes: 0 })
    const total = 4 * 1024 * 1024
    const expected = Buffer.alloc(total)
    for (let i = 0; i < total; i++) expected[i] = (i * 7 + (i >> 16)) & 0xff
    const source = join(tempDir('tv-slab-'), 'source')
    writeFileSync(source, expected)
    const chunks: Buffer[] = []
    const slabs: number[] = []
    let seen = 0
    let stalled: string | undefined
    let dirty = 0
    // `dd` writes 4 KiB blocks with blocking writes: while unread, the socket fills to its bound
    // (60 to 64 KiB here), and the bytes written (`wchar`) are the bytes queued.
    const proc = runtime.start({
      tool: tool('/bin/dd', { process: { mode: 'stream', output: output('chunks') } }),
      argv: [`if=${source}`, 'bs=4096', 'status=none'],
      onEvent: (event) => {
        const chunk = event.value as Buffer
        chunks.push(Buffer.from(chunk))
        slabs.push(chunk.buffer.byteLength)
        // Past the chunk its slab holds nothing yet: zeros, no other memory of the process.
        if (Buffer.from(chunk.buffer, chunk.byteOffset + chunk.length).some((byte) => byte !== 0)) dirty++
        seen += chunk.length
        // Hold the loop until the producer is 32 KiB ahead (or done), as a busy runtime would: reads
        // then fill what they are offered, up to that, and slabs grow.
        const deadline = Date.now() + 10_000
        while (written() < Math.min(total, seen + 32 * 1024)) {
          if (Date.now() > deadline) {
            stalled ??= `the producer did not get ahead: ${written()} written, ${seen} read`
            break
          }
        }
      },
    })
    /** Bytes the producer wrote (all of them once it exited: a zombie's counters read 0). */
    const written = () => {
      try {
        const stat = readFileSync(`/proc/${proc.pid}/stat`, 'utf8')
        if (stat[stat.lastIndexOf(')') + 2] === 'Z') return total
        return Number(/wchar:\s+(\d+)/.exec(readFileSync(`/proc/${proc.pid}/io`, 'utf8'))?.[1])
      } catch {
        return total
      }
    }
    await proc.launched
    expect((await proc.exit).code).toBe(0)
    expect(stalled).toBeUndefined()
    expect(Buffer.concat(chunks).equals(expected)).toBe(true)
    expect(readFileSync(proc.output.stdout().spillPath!).equals(expected)).toBe(true)
    expect(Math.max(...slabs)).toBe(MAX_SLAB)
    expect(dirty).toBe(0)
  })

  it('loses nothing read before anyone listens, and keeps setEncoding and end as a socket does', async () => {
    const server = new ForkServer(builtForkServer)
    servers.push(server)
    const launch = {
      file: '/bin/sh',
      args: ['-c', 'head -c 100000 /dev/zero | tr "\\0" x; printf "\\nbye"'],
      env: { PATH: '/usr/bin:/bin' },
      cwd: '/',
      extraFds: [],
    }
    const { child } = await server.launch(launch, { stdoutInSlabs: true })
    // Nobody reads until the stream holds what it read (into slabs, as far as the stream's buffer
    // lets it; the rest waits in the pipe, which holds 64 KiB, and the child for it): none of it
    // is dropped.
    const exited = new Promise((resolve) => child.once('exit', resolve))
    expect(await eventually(() => child.stdout!.readableLength >= 16 * 1024)).toBe(true)
    let text = ''
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      text += chunk
    })
    await new Promise((resolve) => child.stdout!.once('end', resolve))
    await exited
    expect(text).toBe(`${'x'.repeat(100000)}\nbye`)
  })
})
