import { describe, expect, it } from 'vitest'
import { type Line, LineReader } from './line-reader.js'

/** The simple version: split the whole input at once. */
function reference(input: Buffer, max: number): Line[] {
  const lines = input.toString('latin1').split('\n').slice(0, -1)
  return lines.map((latin) => {
    const raw = Buffer.from(latin, 'latin1')
    const line = raw.at(-1) === 13 ? raw.subarray(0, -1) : raw
    if (line.length <= max) return { kind: 'line', text: line.toString('utf8') }
    return {
      kind: 'oversized',
      bytes: line.length,
      head: line.subarray(0, 512).toString('utf8'),
      tail: line.subarray(Math.max(0, line.length - 512)).toString('utf8'),
    }
  })
}

function read(chunks: Buffer[], max: number): Line[] {
  const lines: Line[] = []
  const reader = new LineReader(max, (line) => lines.push(line))
  for (const chunk of chunks) reader.push(chunk)
  return lines
}

/** A deterministic generator, so a failure can be replayed from its seed. */
function random(seed: number): () => number {
  let state = seed
  return () => {
    state = (state * 1103515245 + 12345) % 2 ** 31
    return state / 2 ** 31
  }
}

describe('LineReader', () => {
  it('cut anywhere, gives what splitting the whole input gives (1000 random inputs)', () => {
    for (let seed = 1; seed <= 1000; seed++) {
      const next = random(seed)
      const max = 1 + Math.floor(next() * 1500)
      const pieces: string[] = []
      for (let n = Math.floor(next() * 8); n > 0; n--) {
        const length = Math.floor(next() * max * 2)
        pieces.push(`${'é{"id":1}x'.repeat(length / 10 + 1).slice(0, length)}${next() < 0.3 ? '\r' : ''}\n`)
      }
      if (next() < 0.5) pieces.push('unterminated')
      const input = Buffer.from(pieces.join(''))
      const chunks: Buffer[] = []
      for (let at = 0; at < input.length; ) {
        const size = 1 + Math.floor(next() * (next() < 0.5 ? 7 : 3000))
        chunks.push(input.subarray(at, at + size))
        at += size
      }
      expect(read(chunks, max), `seed ${seed}`).toEqual(reference(input, max))
    }
  })

  it('a line of exactly the limit is a line, with or without \\r; one byte more is oversized', () => {
    expect(read([Buffer.from('abc\n'), Buffer.from('abc\r\n'), Buffer.from('abcd\r\nab\n')], 3)).toEqual([
      { kind: 'line', text: 'abc' },
      { kind: 'line', text: 'abc' },
      { kind: 'oversized', bytes: 4, head: 'abcd', tail: 'abcd' },
      { kind: 'line', text: 'ab' },
    ])
  })

  it('holds at most the limit of an endless line: 100 MB without a newline leaves nothing buffered', () => {
    const reader = new LineReader(1024, () => {})
    const chunk = Buffer.alloc(64 * 1024, 120)
    for (let i = 0; i < 1600; i++) reader.push(chunk)
    const held = reader as unknown as { parts: Buffer[]; head: Buffer; tail: Buffer }
    expect(held.parts).toEqual([])
    // Only the two ends: 512 bytes each, and one more at the tail for a `\r`.
    expect([held.head.length, held.tail.length]).toEqual([512, 513])
  })
})
