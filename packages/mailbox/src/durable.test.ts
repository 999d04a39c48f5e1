import { describe, expect, it } from 'vitest'
import type { Envelope } from './envelope.js'
import { createMailbox } from './mailbox.js'
import { createMemoryStore } from './store.js'

/**
 * A durable source (decision 0113): a kept process's events are replayed from its first byte by
 * the daemon that re-adopts it; what an earlier source of the same name mailed is dropped, so
 * every event is mailed once across the restart.
 */

const eventsIn = (envelopes: readonly Envelope[]) =>
  envelopes.flatMap((e) => (e.kind === 'digest' ? (e.body as unknown[]) : e.kind === 'event' ? [e.body] : []))

describe('a durable source', () => {
  it('reopened under its name after a restart (a new mailbox over the same store): the replayed events it mailed are dropped, the rest mailed once', () => {
    const store = createMemoryStore()
    const before = createMailbox({ store })
    before.open('s1')
    const first = before.source('s1', 'process:p1', { per: 'events', n: 2 }, { durable: 'k1' })
    for (const n of [1, 2, 3, 4, 5]) first.push(n)
    // Two envelopes (1-2, 3-4) reached the store; 5 waited for its pair when the daemon died.
    expect(first.counters()).toMatchObject({ mailed: 4, pending: 1 })

    const after = createMailbox({ store })
    after.open('s1')
    const again = after.source('s1', 'process:p1', { per: 'events', n: 2 }, { durable: 'k1' })
    for (const n of [1, 2, 3, 4, 5, 6]) again.push(n)
    expect(again.counters()).toMatchObject({ events: 6, mailed: 6, pending: 0 })
    const mail = after.deliver('s1').envelopes
    expect(eventsIn(mail)).toEqual([1, 2, 3, 4, 5, 6])
    expect(mail.map((e) => e.id)).toEqual(['process:p1@k1#2', 'process:p1@k1#4', 'process:p1@k1#6'])
  })

  it('another name, or none, drops nothing: a new process under a reused handle mails all it says', () => {
    const store = createMemoryStore()
    const before = createMailbox({ store })
    before.open('s1')
    const first = before.source('s1', 'process:p1', { per: 'events', n: 1 }, { durable: 'k1' })
    first.push('a')
    first.close()
    for (const options of [{ durable: 'k2' }, {}]) {
      const next = before.source('s1', 'process:p1', { per: 'events', n: 1 }, options)
      next.push('b')
      expect(next.counters()).toMatchObject({ events: 1, mailed: 1 })
      next.close()
    }
    expect(eventsIn(before.deliver('s1').envelopes)).toEqual(['a', 'b', 'b'])
  })
})
