import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { bodyEvents, expectExact, random } from '../test/helpers.js'
import type { DigestPolicy, Envelope, Sender } from './envelope.js'
import { sizeOf } from './internal/batch.js'
import { createMailbox } from './mailbox.js'
import type { Mailbox, MailSource } from './types.js'

/** One randomized run: a mailbox, two digest sources, direct posts, and what was given and delivered. */
interface Run {
  readonly rng: ReturnType<typeof random>
  readonly mailbox: Mailbox
  readonly bound: {
    readonly maxUnread: number
    readonly envelopeBytes: number
    readonly envelopeEvents: number
  }
  readonly sources: readonly MailSource[]
  readonly given: Map<Sender, number>
  readonly delivered: Envelope[]
  /** Delivery points and flushes, per source: a round source makes at most one envelope per each. */
  mailingPoints: number
  next: number
}

type Per = DigestPolicy['per']

function policy(per: Per, rng: Run['rng']): DigestPolicy {
  if (per === 'round') return { per }
  return per === 'events' ? { per, n: 1 + rng.int(7) } : { per, n: 1 + rng.int(3) }
}

function start(seed: number, per: Per): Run {
  const rng = random(seed)
  const bound = {
    maxUnread: 2 + rng.int(7),
    envelopeEvents: 1 + rng.int(6),
    envelopeBytes: 20 + rng.int(200),
  }
  const mailbox = createMailbox({ ...bound, keepRead: rng.int(5) })
  mailbox.open('s1')
  const sources = (['process:p1', 'process:p2'] as const).map((from) =>
    mailbox.source('s1', from, policy(per, rng)),
  )
  return { rng, mailbox, bound, sources, given: new Map(), delivered: [], mailingPoints: 1, next: 0 }
}

/** A fresh event with a unique id and a random size (some larger than the whole envelope bound). */
function event(run: Run): { id: number; pad: string } {
  run.next += 1
  return { id: run.next, pad: 'x'.repeat(run.rng.next() < 0.05 ? 300 : run.rng.int(40)) }
}

function give(run: Run, from: Sender): void {
  run.given.set(from, (run.given.get(from) ?? 0) + 1)
}

function deliver(run: Run, max?: number): void {
  const page = run.mailbox.deliver('s1', max === undefined ? {} : { max })
  run.delivered.push(...page.envelopes)
  run.mailingPoints += 1
}

function step(run: Run): void {
  const { rng, mailbox } = run
  const roll = rng.next()
  if (roll < 0.6) {
    const source = run.sources[rng.int(run.sources.length)]!
    source.push(event(run))
    give(run, source.from)
  } else if (roll < 0.68) {
    mailbox.post('s1', { from: 'task:t1', kind: 'event', body: event(run) })
    give(run, 'task:t1')
  } else if (roll < 0.72) {
    mailbox.post('s1', { from: 'system', kind: 'completion', body: { note: run.next } })
  } else if (roll < 0.8) {
    deliver(run, rng.next() < 0.5 ? 1 + rng.int(4) : undefined)
  } else if (roll < 0.84) {
    run.sources[rng.int(run.sources.length)]!.flush()
    run.mailingPoints += 1
  } else if (roll < 0.92) {
    vi.advanceTimersByTime(rng.int(2500))
  } else {
    mailbox.read('s1', 'operator', { max: 1 + rng.int(3) })
  }
}

/** The unread bound holds unless folding could not make room (see foldGroup): then by at most one. */
function expectBounded(run: Run): void {
  const unread = run.mailbox.page('s1', { after: run.mailbox.cursor('s1') }).envelopes
  const whole = unread.filter((e) => e.kind === 'completion' || e.kind === 'control').length
  const foldingSenders = 3
  expect(unread.length).toBe(run.mailbox.unread('s1'))
  expect(unread.length).toBeLessThanOrEqual(Math.max(run.bound.maxUnread, whole + foldingSenders + 1))
}

function finish(run: Run): void {
  for (const source of run.sources) source.close()
  deliver(run)
  expect(run.mailbox.unread('s1')).toBe(0)
}

function expectExactAccounting(run: Run): void {
  const seen = new Set<number>()
  const sums = new Map<Sender, number>()
  let previous = 0
  for (const envelope of run.delivered) {
    expectExact(envelope)
    expect(envelope.seq).toBeGreaterThan(previous)
    previous = envelope.seq
    sums.set(envelope.from, (sums.get(envelope.from) ?? 0) + envelope.events)
    if (envelope.kind === 'completion') continue
    if (envelope.kind === 'digest') {
      expect(sizeOf(envelope.body)).toBeLessThanOrEqual(run.bound.envelopeBytes)
      expect(bodyEvents(envelope).length).toBeLessThanOrEqual(run.bound.envelopeEvents)
    }
    for (const body of bodyEvents(envelope) as { id: number }[]) {
      expect(seen.has(body.id), `event ${body.id} appears twice`).toBe(false)
      seen.add(body.id)
    }
  }
  for (const [from, count] of run.given) expect([from, sums.get(from) ?? 0]).toEqual([from, count])
  expect(sums.get('system') ?? 0).toBe(0)
  for (const source of run.sources) {
    const counters = source.counters()
    expect(counters).toMatchObject({ events: run.given.get(source.from) ?? 0, pending: 0, pendingBytes: 0 })
    expect(counters.mailed).toBe(counters.events)
  }
}

beforeEach(() => {
  vi.useFakeTimers()
})

afterEach(() => {
  vi.useRealTimers()
})

describe('digests over random event streams and random delivery points', () => {
  for (const per of ['round', 'events', 'seconds'] as const) {
    it(`per ${per}: each sender's events add up exactly and no event is delivered twice`, () => {
      for (let seed = 1; seed <= 60; seed++) {
        const run = start(seed * 7919 + per.length, per)
        const steps = 50 + run.rng.int(400)
        for (let i = 0; i < steps; i++) {
          step(run)
          expectBounded(run)
        }
        finish(run)
        expectExactAccounting(run)
        if (per === 'round') {
          for (const source of run.sources)
            expect(source.counters().envelopes).toBeLessThanOrEqual(run.mailingPoints)
        }
        expect(vi.getTimerCount()).toBe(0)
        run.mailbox.dispose()
      }
    })
  }
})
