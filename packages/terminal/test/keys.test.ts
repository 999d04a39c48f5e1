import { describe, expect, it } from 'vitest'
import { keyBytes, keystrokeBytes, TerminalError } from '../src/index.js'

describe('keys by name', () => {
  it('encodes what an xterm sends for each named key', () => {
    expect(keyBytes('Enter')).toBe('\r')
    expect(keyBytes('Tab')).toBe('\t')
    expect(keyBytes('Escape')).toBe('\x1b')
    expect(keyBytes('Backspace')).toBe('\x7f')
    expect(keyBytes('C-c')).toBe('\x03')
    expect(keyBytes('C-d')).toBe('\x04')
    expect(keyBytes('C-Z')).toBe('\x1a')
    expect(keyBytes('C-[')).toBe('\x1b')
    expect(keyBytes('C-@')).toBe('\x00')
    expect(keyBytes('PageDown')).toBe('\x1b[6~')
    expect(keyBytes('F1')).toBe('\x1bOP')
    expect(keyBytes('F12')).toBe('\x1b[24~')
    expect(keyBytes('M-x')).toBe('\x1bx')
    expect(keyBytes('M-Up')).toBe('\x1b\x1b[A')
  })

  it('sends arrows, Home and End in the form the program asked for (application cursor keys)', () => {
    expect(['Up', 'Down', 'Right', 'Left', 'Home', 'End'].map((k) => keyBytes(k))).toEqual([
      '\x1b[A',
      '\x1b[B',
      '\x1b[C',
      '\x1b[D',
      '\x1b[H',
      '\x1b[F',
    ])
    expect(keyBytes('Up', { applicationCursor: true })).toBe('\x1bOA')
    expect(keyBytes('End', { applicationCursor: true })).toBe('\x1bOF')
  })

  it('joins text (UTF-8) and keys in order', () => {
    expect(keystrokeBytes([{ text: 'ls é' }, { key: 'Enter' }, { key: 'C-d' }])).toEqual(
      Buffer.from('ls é\r\x04', 'utf8'),
    )
  })

  it('refuses a name it does not know, saying which and what the names are, before encoding any', () => {
    expect(() => keystrokeBytes([{ text: 'a' }, { key: 'enter' }])).toThrow(TerminalError)
    expect(() => keyBytes('Ctrl-C')).toThrow(/unknown key "Ctrl-C": the keys are Enter, Tab, .*C-a … C-z/)
    expect(() => keyBytes('C-1')).toThrow(/unknown key "C-1"/)
  })
})
