// The visible escaping's set (decision 0013 and its amendment of 2026-12-01): every code point a
// terminal or renderer acts on or draws as nothing is escaped, its neighbours are not, and JSON
// answers parse back to exactly what was escaped.
import { describe, expect, it } from 'vitest'
import { visibleJson, visibleLine, visibleText } from './text.js'

/** Every range the set holds, inclusive, by code point. */
const ESCAPED_RANGES: ReadonlyArray<readonly [number, number]> = [
  [0x00, 0x08],
  [0x0b, 0x1f],
  [0x7f, 0x9f],
  [0xad, 0xad],
  [0x061c, 0x061c],
  [0x180e, 0x180e],
  [0x200b, 0x200f],
  [0x2028, 0x202e],
  [0x2060, 0x2064],
  [0x2066, 0x2069],
  [0xfeff, 0xfeff],
  [0xe0000, 0xe007f],
]
const members = ESCAPED_RANGES.flatMap(([from, to]) =>
  Array.from({ length: to - from + 1 }, (_, i) => String.fromCodePoint(from + i)),
)
/** The code points right beside the set, and ordinary text: all left as they are. */
const NEIGHBOURS = [
  '\t',
  'a',
  ' ',
  '\u00a0',
  '\u00ae',
  '\u200a',
  '\u2010',
  '\u2027',
  '\u202f',
  '\u2065',
  '\u206a',
  '\ufe0f',
  '\ufefe',
  '\u{e0080}',
  '\u{1f600}',
  'é',
  '日本',
]

const shown = (char: string) => {
  const code = char.codePointAt(0)!
  return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, '0')}`
}

describe('visibleText', () => {
  it('escapes every member of the set as \\uXXXX (a tag character as \\u{e0041}), and nothing beside it', () => {
    for (const char of members) expect(visibleText(`a${char}b`)).toBe(`a${shown(char)}b`)
    for (const char of NEIGHBOURS) expect(visibleText(char)).toBe(char)
    expect(visibleText('line\n')).toBe('line\n')
  })

  it('keeps a carriage return before a newline, escapes a bare one', () => {
    expect(visibleText('a\r\nb\rc\r')).toBe('a\r\nb\\u000dc\\u000d')
  })

  it('shows ASCII smuggled in tag characters, the soft hyphen, zero-width and the separators', () => {
    const smuggled = [...'ignore'].map((c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0))).join('')
    expect(visibleText(`ok${smuggled}`)).toBe(
      'ok\\u{e0069}\\u{e0067}\\u{e006e}\\u{e006f}\\u{e0072}\\u{e0065}',
    )
    expect(visibleText('pay\u00adpal \u2060x\u2028y\u2029z')).toBe('pay\\u00adpal \\u2060x\\u2028y\\u2029z')
  })
})

describe('visibleLine', () => {
  it('is one line: newlines as \\n, every carriage return escaped, the rest as visibleText', () => {
    expect(visibleLine('a\r\nb\n\nc\u001b[8m\td')).toBe('a\\u000d\\nb\\n\\nc\\u001b[8m\td')
  })
})

describe('visibleJson', () => {
  it('escapes the set inside JSON strings (a tag character as its surrogate pair) and parses back', () => {
    const value = { text: `x${members.join('')}y`, list: ['\u{e0041}', '\u202e'] }
    const json = visibleJson(value)
    for (const char of members) expect(json).not.toContain(char)
    expect(JSON.parse(json)).toEqual(value)
    expect(visibleJson('\u{e0041}')).toBe('"\\udb40\\udc41"')
    expect(visibleJson({ a: '\u202e' }, 2)).toBe('{\n  "a": "\\u202e"\n}')
  })

  it('over random strings: no member survives raw, and the value parses back unchanged', () => {
    const pool = [...members, ...NEIGHBOURS, '\n', '\r', '"', '\\', 'x']
    const set = new Set(members)
    let seed = 26
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31
      return seed
    }
    for (let round = 0; round < 500; round++) {
      const text = Array.from({ length: next() % 40 }, () => pool[next() % pool.length]).join('')
      const escaped = visibleText(text)
      const line = visibleLine(text)
      const json = visibleJson(text)
      const raw = (out: string) =>
        [...out].filter((c, i, all) => set.has(c) && !(c === '\r' && all[i + 1] === '\n'))
      expect(raw(escaped)).toEqual([])
      expect([...line].filter((c) => set.has(c))).toEqual([])
      expect([...json].filter((c) => set.has(c))).toEqual([])
      expect(line).not.toContain('\n')
      expect(JSON.parse(json)).toBe(text)
    }
  })
})
