import { describe, expect, it } from 'vitest'
import { mailBlock } from './mail-text.js'

const envelope = { id: 'm3', from: 'process:p1', events: 1, omitted: 0 } as const

describe('mailBlock', () => {
  it('starts every block with [mail <id> from <sender>] and says what a digest stands for', () => {
    expect(mailBlock({ ...envelope, kind: 'event', body: { line: 'disk full' } })).toBe(
      '[mail m3 from process:p1] {"line":"disk full"}',
    )
    expect(mailBlock({ ...envelope, kind: 'digest', body: [1, 2], events: 2 })).toBe(
      '[mail m3 from process:p1] 2 events: [1,2]',
    )
    expect(mailBlock({ ...envelope, kind: 'digest', body: [9], events: 1200, omitted: 1199 })).toBe(
      '[mail m3 from process:p1] 1200 events, the oldest 1199 left out: [9]',
    )
    expect(
      mailBlock({
        ...envelope,
        id: 'exit-p1',
        kind: 'completion',
        body: { status: 'exited (0)' },
        events: 0,
      }),
    ).toBe('[mail exit-p1 from process:p1] completion: {"status":"exited (0)"}')
    expect(mailBlock({ ...envelope, from: 'system', kind: 'control', body: 'pause', events: 0 })).toBe(
      '[mail m3 from system] control: "pause"',
    )
  })

  it('escapes the control codes a process wrote', () => {
    expect(mailBlock({ ...envelope, kind: 'event', body: '\u001b[2Jgone\u202e' })).toBe(
      '[mail m3 from process:p1] "\\u001b[2Jgone\\u202e"',
    )
  })
})
