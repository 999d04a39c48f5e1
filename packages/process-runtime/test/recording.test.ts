// A terminal's recording (asciicast in the spill directory) when the disk does not keep up: what
// waits behind a stalled write is bounded, and the recording stops with a marker saying why. The
// stalled disk is a FIFO nobody reads until the test drains it.
import { spawnSync } from 'node:child_process'
import { closeSync, constants, openSync, readSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { Recording } from '../src/internal/recording.js'
import { tempDir } from './helpers.js'

describe('a recording whose disk does not keep up', () => {
  it('holds at most 8 MiB behind a stalled write, then stops with a marker; the lines stay whole', async () => {
    const fifo = join(tempDir(), 'stalled.cast')
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0)
    // A reader that reads nothing until the end: writes stall once the pipe's buffer is full.
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK)
    const recording = new Recording({
      file: {
        path: fifo,
        open: (flags) => openSync(fifo, flags),
        remove: () => rmSync(fifo, { force: true }),
      },
      size: { columns: 80, rows: 24 },
      cap: 1024 * 1024 * 1024,
    })
    const chunk = Buffer.alloc(64 * 1024, 'x')
    // 12 MiB shown: the first write takes what the pipe holds and stalls; the rest waits, up to the bound.
    for (let i = 0; i < 192; i++) recording.output(chunk)
    const drained = recording.drained()
    const received: Buffer[] = []
    const buffer = Buffer.alloc(1024 * 1024)
    let settled = false
    void drained.then(() => {
      settled = true
    })
    while (!settled) {
      let n = 0
      try {
        n = readSync(reader, buffer)
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error
      }
      if (n > 0) received.push(Buffer.from(buffer.subarray(0, n)))
      else await new Promise((resolve) => setImmediate(resolve))
    }
    for (let n = 1; n > 0; ) {
      try {
        n = readSync(reader, buffer)
      } catch {
        n = 0
      }
      if (n > 0) received.push(Buffer.from(buffer.subarray(0, n)))
    }
    recording.close()
    closeSync(reader)
    const lines = Buffer.concat(received).toString('utf8').trimEnd().split('\n')
    const parsed = lines.map((line) => JSON.parse(line) as unknown)
    expect(parsed[0]).toMatchObject({ version: 2, width: 80, height: 24 })
    expect(parsed.at(-1)).toEqual([expect.any(Number), 'm', 'recording stopped: the disk did not keep up'])
    const shown = parsed.slice(1, -1) as Array<[number, string, string]>
    const bytes = shown.reduce((sum, [, , text]) => sum + text.length, 0)
    expect(bytes).toBeGreaterThan(0)
    expect(bytes).toBeLessThanOrEqual(8 * 1024 * 1024 + 64 * 1024)
    // More shown after it stopped is not recorded.
    recording.output(chunk)
    await recording.drained()
  })
})
