import { describe, expect, it } from 'vitest'
import { LineFramer } from './framing.js'

function frame(chunks: string[], maxLine = 10) {
  const out: Array<[string, number] | [string, number, number]> = []
  const framer = new LineFramer(
    {
      line: (buffer, start, end, offset) => out.push([buffer.toString('utf8', start, end), offset]),
      overlong: (preview, offset, length) => out.push([`!${preview.toString()}`, offset, length]),
    },
    maxLine,
  )
  for (const chunk of chunks) framer.push(Buffer.from(chunk))
  framer.end()
  return out
}

describe('LineFramer', () => {
  it('reports lines with their byte offsets, across chunk boundaries', () => {
    expect(frame(['ab\ncd', 'e\n\nf'])).toEqual([
      ['ab', 0],
      ['cde', 3],
      ['', 7],
      ['f', 8],
    ])
  })

  it('holds a line across several chunks, empty chunks included, and starts the next one after it', () => {
    expect(frame(['a', '', 'b', 'c\nd', '', 'e\r', '\n'])).toEqual([
      ['abc', 0],
      ['de', 4],
    ])
    expect(frame(['\n', '\r\n', 'x'])).toEqual([
      ['', 0],
      ['', 1],
      ['x', 3],
    ])
  })

  it('removes a CR before the newline, even when they arrive in different chunks', () => {
    expect(frame(['one\r', '\ntwo\r\n'])).toEqual([
      ['one', 0],
      ['two', 5],
    ])
  })

  it('reports a line past the bound once, at its end, with a preview and its full length', () => {
    expect(frame(['0123456789ABC', 'DEF\nok\n'], 10)).toEqual([
      ['!0123456789ABCDEF', 0, 16],
      ['ok', 17],
    ])
    expect(frame(['0123456789ABCDEF\nok'], 10)).toEqual([
      ['!0123456789ABCDEF', 0, 16],
      ['ok', 17],
    ])
    expect(frame(['01234', '56789', 'X'], 10)).toEqual([['!0123456789X', 0, 11]])
  })
})

describe('LineFramer, ASCII and UTF-8 chunks alike', () => {
  it('gives the same lines and offsets whatever the chunking and the characters', () => {
    let seed = 42
    const random = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff
      return seed / 0x7fffffff
    }
    const pieces = ['a', 'bc', '{"n":1}', 'é', '€', '日本', '\r', ' ', 'xyz']
    for (let round = 0; round < 200; round++) {
      const lines = Array.from({ length: 1 + Math.floor(random() * 8) }, () =>
        Array.from(
          { length: Math.floor(random() * 6) },
          () => pieces[Math.floor(random() * pieces.length)],
        ).join(''),
      )
      const bytes = Buffer.from(`${lines.join('\n')}\n`)
      const expected: Array<[string, number]> = []
      let offset = 0
      for (const line of lines) {
        expected.push([line.endsWith('\r') ? line.slice(0, -1) : line, offset])
        offset += Buffer.byteLength(line) + 1
      }
      const out: Array<[string, number]> = []
      const framer = new LineFramer(
        {
          line: (buffer, start, end, at, ascii) =>
            out.push([
              ascii === undefined ? buffer.toString('utf8', start, end) : ascii.slice(start, end),
              at,
            ]),
          overlong: () => {
            throw new Error('no line is that long here')
          },
        },
        1024,
      )
      for (let at = 0; at < bytes.length; ) {
        const size = 1 + Math.floor(random() * 12)
        framer.push(bytes.subarray(at, at + size))
        at += size
      }
      framer.end()
      expect(out).toEqual(expected)
    }
  })
})
