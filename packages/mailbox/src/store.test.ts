import { describe, expect, it } from 'vitest'
import type { Envelope } from './envelope.js'
import { createMemoryStore } from './store.js'

const envelope = (seq: number): Envelope => ({
  id: `m${seq}`,
  seq,
  from: 'process:p1',
  at: '2026-12-01T00:00:00.000Z',
  kind: 'event',
  body: seq,
  events: 1,
  omitted: 0,
})

const seqs = (envelopes: readonly Envelope[]) => envelopes.map((e) => e.seq)

describe('the memory store (the MailStore contract a durable store keeps too)', () => {
  it('answers for a session it does not know with empty results', () => {
    const store = createMemoryStore()
    expect([store.sessions(), store.read('s1', 0, 10), store.lastSeq('s1'), store.cursor('s1', 'r')]).toEqual(
      [[], [], 0, 0],
    )
    expect(store.seqOf('s1', 'x')).toBeUndefined()
    store.trim('s1', 5)
    store.drop('s1')
    expect(store.sessions()).toEqual([])
  })

  it('reads ranges by seq, folds, trims and keeps ids and cursors until drop', () => {
    const store = createMemoryStore()
    for (const seq of [1, 2, 3, 4]) store.append('s1', envelope(seq), seq === 2 ? 'posted' : undefined)
    expect(seqs(store.read('s1', 1, 2))).toEqual([2, 3])
    expect(seqs(store.read('s1', 0, Number.POSITIVE_INFINITY))).toEqual([1, 2, 3, 4])
    store.fold('s1', [2, 3], envelope(5))
    expect(seqs(store.read('s1', 0, 10))).toEqual([1, 4, 5])
    store.trim('s1', 4)
    expect(seqs(store.read('s1', 0, 10))).toEqual([5])
    store.setCursor('s1', 'delivery', 4)
    expect([store.seqOf('s1', 'posted'), store.seqOf('s1', 'm1'), store.lastSeq('s1')]).toEqual([
      2,
      undefined,
      5,
    ])
    expect([store.cursor('s1', 'delivery'), store.sessions()]).toEqual([4, ['s1']])
    store.drop('s1')
    expect([store.sessions(), store.seqOf('s1', 'posted'), store.lastSeq('s1')]).toEqual([[], undefined, 0])
  })
})
