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
  it('skips lines of whitespace only, Unicode spaces included, and keeps byte offsets', () => {
    const blank = ['', '   ', '\t', '\r', '\u00a0', '\u3000 \u2028']
    const text = `${blank.join('\n')}\n{"n":1}\n`
    expect(decode([text])).toEqual([[{ n: 1 }, Buffer.byteLength(`${blank.join('\n')}\n`), false]])
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
