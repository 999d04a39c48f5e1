import { describe, expect, it } from 'vitest'
import { AsciicastRecorder } from '../src/index.js'

describe('an asciicast v2 recording', () => {
  it('starts with its header and times each event from the start', () => {
    let now = 1_765_000_000_250
    const recorder = new AsciicastRecorder({
      columns: 80,
      rows: 24,
      now: () => now,
      env: { TERM: 'xterm-256color' },
    })
    expect(JSON.parse(recorder.header())).toEqual({
      version: 2,
      width: 80,
      height: 24,
      timestamp: 1_765_000_000,
      env: { TERM: 'xterm-256color' },
    })
    now += 1500
    expect(recorder.output(Buffer.from('$ ls\r\n'))).toBe('[1.5,"o","$ ls\\r\\n"]')
    now += 250.5
    expect(recorder.input(Buffer.from('q'))).toBe('[1.7505,"i","q"]')
    expect(recorder.resize(132, 43)).toBe('[1.7505,"r","132x43"]')
  })

  it('writes a character split between reads whole, in the later event; bytes that are not UTF-8 as U+FFFD', () => {
    const recorder = new AsciicastRecorder({ columns: 80, rows: 24, now: () => 0 })
    const e = Buffer.from('é', 'utf8')
    expect(recorder.output(Buffer.from([0x61, e[0]!]))).toBe('[0,"o","a"]')
    expect(recorder.output(Buffer.from([e[1]!, 0x62]))).toBe('[0,"o","éb"]')
    expect(recorder.output(Buffer.from([0xff, 0x63]))).toBe('[0,"o","\uFFFDc"]')
    // Nothing whole yet: no event.
    expect(recorder.output(Buffer.from([0xe2, 0x82]))).toBeUndefined()
    expect(recorder.output(Buffer.from([0xac]))).toBe('[0,"o","€"]')
    // Escape codes travel as JSON escapes, never raw.
    expect(recorder.output(Buffer.from('\x1b[31mred'))).toBe('[0,"o","\\u001b[31mred"]')
  })
})
