import { describe, expect, it } from 'vitest'
import { bodyEvents, expectExact, totals } from '../test/helpers.js'
import type { DigestPolicy, Envelope } from './envelope.js'
import { sizeOf } from './internal/batch.js'
import { createMailbox } from './mailbox.js'

const PER_SECOND = 20_000
const SECONDS = 10
const TOTAL = PER_SECOND * SECONDS
const BOUND = 64 * 1024

/** A log watcher's event: about 60 bytes of JSON. */
const line = (n: number) => ({ line: `GET /api/items/${n} 200 3ms`, level: 'info', n })

/**
 * Pushes 20,000 events per simulated second for 10 seconds into one source, with a delivery point
 * after each second when `deliverEachSecond`; checks after every push that the pending events
 * stay within one envelope's bound. Returns every envelope delivered.
 */
function burst(digest: DigestPolicy, deliverEachSecond: boolean) {
  const mailbox = createMailbox()
  mailbox.open('s1')
  const source = mailbox.source('s1', 'process:p1', digest)
  const delivered: Envelope[] = []
  let most = { pendingBytes: 0, unread: 0, stored: 0 }
  for (let second = 0; second < SECONDS; second++) {
    for (let i = 0; i < PER_SECOND; i++) {
      source.push(line(second * PER_SECOND + i))
      const { pendingBytes } = source.counters()
      if (pendingBytes > most.pendingBytes) most = { ...most, pendingBytes }
    }
    most = {
      ...most,
      unread: Math.max(most.unread, mailbox.unread('s1')),
      stored: Math.max(most.stored, mailbox.page('s1').envelopes.length),
    }
    if (deliverEachSecond) delivered.push(...mailbox.deliver('s1').envelopes)
  }
  source.close()
  delivered.push(...mailbox.deliver('s1').envelopes)
  return { delivered, most, counters: source.counters() }
}

function expectAllCounted(delivered: readonly Envelope[]): void {
  for (const envelope of delivered) {
    expectExact(envelope)
    expect(sizeOf(envelope.body)).toBeLessThanOrEqual(BOUND)
  }
  const sum = totals(delivered).get('process:p1')!
  const kept = delivered.flatMap(bodyEvents) as { n: number }[]
  expect(sum.events).toBe(TOTAL)
  expect(sum.omitted).toBe(TOTAL - kept.length)
  expect(new Set(kept.map((event) => event.n)).size).toBe(kept.length)
}

describe('a burst of 20,000 events per second for 10 seconds', () => {
  it('per round with a delivery point each second: 10 envelopes of at most 64 KiB each', () => {
    const { delivered, most, counters } = burst({ per: 'round' }, true)
    expect(delivered).toHaveLength(SECONDS)
    expectAllCounted(delivered)
    expect(delivered.reduce((bytes, e) => bytes + sizeOf(e.body), 0)).toBeLessThanOrEqual(SECONDS * BOUND)
    expect(most.pendingBytes).toBeLessThanOrEqual(BOUND)
    expect(counters).toEqual({
      events: TOTAL,
      mailed: TOTAL,
      pending: 0,
      pendingBytes: 0,
      envelopes: SECONDS,
    })
    // The newest events that fit are kept: the last one pushed each second is in that second's body.
    expect(delivered.map((e) => (e.body as { n: number }[]).at(-1)?.n)).toEqual(
      Array.from({ length: SECONDS }, (_, second) => (second + 1) * PER_SECOND - 1),
    )
  })

  it('per round with no delivery point until the end: one envelope', () => {
    const { delivered, most } = burst({ per: 'round' }, false)
    expect(delivered).toHaveLength(1)
    expect(most.unread).toBe(0)
    expectAllCounted(delivered)
  })

  it('per events n=1 with no delivery point: unread and stored mail stay within the bound', () => {
    const { delivered, most } = burst({ per: 'events', n: 1 }, false)
    expect(most.unread).toBeLessThanOrEqual(256)
    expect(most.stored).toBeLessThanOrEqual(256)
    expect(delivered.length).toBeLessThanOrEqual(256)
    expectAllCounted(delivered)
  })
})
