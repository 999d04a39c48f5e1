import { describe, expect, it } from 'vitest'
import { foldMail, mailBlock, mailWaiting } from './mail-text.js'

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

describe('foldMail', () => {
  /** A mailbox of one open session holding `count` events, delivering what fits `maxBytes`. */
  function holding(count: number) {
    const pending = Array.from({ length: count }, (_, i) => ({
      ...envelope,
      id: `m${i + 1}`,
      kind: 'event' as const,
      body: i,
    }))
    return {
      isOpen: (session: string) => session === 's1',
      deliver(_session: string, { maxBytes }: { readonly maxBytes: number }) {
        const envelopes = pending.splice(0, Math.max(1, Math.floor(maxBytes / 100)))
        return { envelopes, more: pending.length > 0 }
      },
    }
  }
  const readBack = {
    call: (r: unknown) => `reader ${JSON.stringify(r)}`,
    args: (r: unknown) => JSON.stringify(r),
  }

  it('folds what fits, then says more waits, naming the read back only when there is one', () => {
    expect(foldMail(holding(3), 's1', { maxBytes: 200 })).toEqual([
      '[mail m1 from process:p1] 0',
      '[mail m2 from process:p1] 1',
      '[more mail waits than one result holds]',
    ])
    expect(foldMail(holding(3), 's1', { maxBytes: 200, readBack }).at(-1)).toBe(
      '[more mail waits than one result holds: call reader {"command":"wait","timeout_seconds":0} to read it]',
    )
    expect(foldMail(holding(1), 's1', { maxBytes: 200 })).toEqual(['[mail m1 from process:p1] 0'])
  })

  it('folds nothing with 0 bytes or for a session without a mailbox, and delivers nothing then', () => {
    const mailbox = holding(2)
    expect(foldMail(mailbox, 's1', { maxBytes: 0 })).toEqual([])
    expect(foldMail(mailbox, 's2', { maxBytes: 200 })).toEqual([])
    expect(foldMail(mailbox, 's1', { maxBytes: 200 })).toHaveLength(2)
  })

  it('words the notice that mail waits, with the read back when there is one', () => {
    expect(mailWaiting('process:p1', undefined)).toBe(
      '[mail waiting from process:p1] it comes with the next tool result of this session',
    )
    expect(mailWaiting('process:p1', readBack)).toBe(
      '[mail waiting from process:p1] it comes with the next tool result of this session, or call reader {"command":"wait"} to read it now',
    )
  })
})
