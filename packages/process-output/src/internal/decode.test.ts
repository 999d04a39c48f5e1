import { describe, expect, it } from 'vitest'
import { createDecoder } from './decode.js'

function decode(chunks: string[]) {
  const out: Array<[unknown, number, boolean]> = []
  const decoder = createDecoder(
    { output: { framing: 'jsonl' }, maxLine: 1024 },
    { event: (value, offset, invalid) => out.push([value, offset, invalid]) },
  )
  for (const chunk of chunks) decoder.push(Buffer.from(chunk))
  decoder.end()
  return out
}

describe('jsonl decoding', () => {
  it('makes a line of whitespace only an invalid event (ruling 8), Unicode spaces included, with byte offsets', () => {
    const blank = ['', '   ', '\t', '\r', '\u00a0', '\u3000 \u2028']
    const text = `${blank.join('\n')}\n{"n":1}\n`
    let offset = 0
    const expected = blank.map((line) => {
      const at = offset
      offset += Buffer.byteLength(`${line}\n`)
      // A \r before the newline is part of the line terminator (CRLF), not of the line.
      return [{ invalid: true, raw: line.replace(/\r$/, ''), error: 'not JSON: a blank line' }, at, true]
    })
    expect(decode([text])).toEqual([...expected, [{ n: 1 }, offset, false]])
  })

  it('makes a value nested deeper than 512 levels an invalid event, not a stack overflow downstream', () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`
    const out: unknown[] = []
    const decoder = createDecoder(
      { output: { framing: 'jsonl' }, maxLine: 1024 * 1024 },
      { event: (value, _offset, invalid) => out.push([invalid, (value as { error?: string }).error]) },
    )
    decoder.push(Buffer.from(`${deep}\n["ok"]\n${'['.repeat(512)}${']'.repeat(512)}\n`))
    decoder.end()
    expect(out).toEqual([
      [true, 'nested deeper than 512 levels'],
      [false, undefined],
      [false, undefined],
    ])
  })

  it('parses a line that starts with a printable character, and reports one that is not JSON', () => {
    expect(decode(['{"n":1}\n', '7\n', '\u00a0{"n":2}\n'])).toEqual([
      [{ n: 1 }, 0, false],
      [7, 8, false],
      [
        {
          invalid: true,
          raw: '\u00a0{"n":2}',
          error: expect.stringMatching(/^not JSON: /),
        },
        10,
        true,
      ],
    ])
  })
})
