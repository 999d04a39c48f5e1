import { describe, expect, it } from 'vitest'
import { bodyEvents, expectExact, totals } from '../test/helpers.js'
import type { Sender } from './envelope.js'
import { createMailbox } from './mailbox.js'

function mailbox(options: Parameters<typeof createMailbox>[0]) {
  const box = createMailbox(options)
  box.open('s1')
  return box
}

const post = (box: ReturnType<typeof mailbox>, from: Sender, kind: 'event' | 'completion', body: unknown) =>
  box.post('s1', { from, kind, body })

describe('folding at the unread bound', () => {
  it('folds the oldest sender’s news into one digest that states its count, keeping completions', () => {
    const box = mailbox({ maxUnread: 4 })
    post(box, 'process:p1', 'event', 1)
    post(box, 'task:t1', 'completion', { exit: 0 })
    post(box, 'process:p1', 'event', 2)
    post(box, 'process:p1', 'event', 3)
    expect(box.unread('s1')).toBe(4)
    post(box, 'process:p1', 'event', 4)
    const envelopes = box.page('s1').envelopes
    expect(envelopes.map((e) => [e.seq, e.kind, e.body, e.events])).toEqual([
      [2, 'completion', { exit: 0 }, 0],
      [5, 'digest', [1, 2, 3], 3],
      [6, 'event', 4, 1],
    ])
    expect(envelopes[1]).toMatchObject({ id: 'm5', from: 'process:p1', omitted: 0 })
    expect(box.unread('s1')).toBe(3)
  })

  it('folds digests again with their omitted counts, so the counts add up exactly', () => {
    const box = mailbox({ maxUnread: 3, envelopeEvents: 2 })
    for (let i = 1; i <= 20; i++) post(box, 'process:p1', 'event', i)
    const envelopes = box.deliver('s1').envelopes
    expect(envelopes.length).toBeLessThanOrEqual(3)
    for (const envelope of envelopes) expectExact(envelope)
    expect(totals(envelopes).get('process:p1')).toEqual({ events: 20, omitted: 17 })
    expect(envelopes.flatMap(bodyEvents)).toEqual([18, 19, 20])
  })

  it('never folds completion or control envelopes: with only those, the bound is exceeded', () => {
    const box = mailbox({ maxUnread: 2 })
    post(box, 'task:t1', 'completion', 1)
    box.post('s1', { from: 'system', kind: 'control', body: 'pause' })
    post(box, 'task:t2', 'completion', 2)
    post(box, 'process:p1', 'event', 'news')
    expect(box.page('s1').envelopes.map((e) => e.kind)).toEqual([
      'completion',
      'control',
      'completion',
      'event',
    ])
    expect(box.unread('s1')).toBe(4)
  })
})

describe('folding, sender by sender', () => {
  it('folds one sender at a time, so each digest keeps its from and each sender its count', () => {
    const box = mailbox({ maxUnread: 3 })
    const shape = () => box.page('s1').envelopes.map((e) => [e.from, e.body])
    post(box, 'process:p2', 'event', 'b1')
    post(box, 'process:p1', 'event', 'a1')
    post(box, 'process:p1', 'event', 'a2')
    post(box, 'process:p1', 'event', 'a3')
    expect(shape()).toEqual([
      ['process:p2', 'b1'],
      ['process:p1', ['a1', 'a2']],
      ['process:p1', 'a3'],
    ])
    post(box, 'process:p2', 'event', 'b2')
    expect(shape()).toEqual([
      ['process:p2', 'b1'],
      ['process:p1', ['a1', 'a2', 'a3']],
      ['process:p2', 'b2'],
    ])
    post(box, 'task:t1', 'event', 't')
    expect(shape()).toEqual([
      ['process:p1', ['a1', 'a2', 'a3']],
      ['process:p2', ['b1', 'b2']],
      ['task:t1', 't'],
    ])
  })

  it('exceeds the bound rather than drop when every sender has a single foldable envelope', () => {
    const box = mailbox({ maxUnread: 2 })
    for (const from of ['process:p1', 'process:p2', 'process:p3'] as const) post(box, from, 'event', from)
    post(box, 'process:p1', 'event', 'again')
    expect(box.unread('s1')).toBe(4)
    post(box, 'process:p1', 'event', 'third')
    expect(box.page('s1').envelopes.map((e) => e.body)).toEqual([
      'process:p2',
      'process:p3',
      ['process:p1', 'again'],
      'third',
    ])
  })
})

describe('what folding keeps', () => {
  it('keeps only the newest events that fit the byte bound and counts the rest as omitted', () => {
    const box = mailbox({ maxUnread: 2, envelopeBytes: 8 })
    for (const body of ['aaa', 'bbb', 'ccc']) post(box, 'process:p1', 'event', body)
    const [digest] = box.page('s1').envelopes
    expect(digest).toMatchObject({ kind: 'digest', body: ['bbb'], events: 2, omitted: 1 })
  })

  it('only folds unread mail: delivered envelopes stay as they were read', () => {
    const box = mailbox({ maxUnread: 2 })
    post(box, 'process:p1', 'event', 1)
    post(box, 'process:p1', 'event', 2)
    box.deliver('s1')
    post(box, 'process:p1', 'event', 3)
    post(box, 'process:p1', 'event', 4)
    post(box, 'process:p1', 'event', 5)
    expect(box.page('s1').envelopes.map((e) => e.body)).toEqual([1, 2, [3, 4], 5])
  })

  it('answers a duplicate of a folded envelope with the seq it was first accepted at', () => {
    const box = mailbox({ maxUnread: 2 })
    box.post('s1', { id: 'x', from: 'process:p1', kind: 'event', body: 1 })
    post(box, 'process:p1', 'event', 2)
    post(box, 'process:p1', 'event', 3)
    expect(box.post('s1', { id: 'x', from: 'process:p1', kind: 'event', body: 1 })).toEqual({
      id: 'x',
      seq: 1,
      duplicate: true,
    })
    expect(totals(box.page('s1').envelopes).get('process:p1')?.events).toBe(3)
  })
})
