import type { Envelope } from '../src/index.js'

/** A seeded generator (mulberry32): the same seed gives the same run, so a failure can be replayed. */
export function random(seed: number): { next(): number; int(below: number): number } {
  let state = seed >>> 0
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return { next, int: (below) => Math.floor(next() * below) }
}

/** The events an envelope's body holds (an `event` holds one; completion and control hold none). */
export function bodyEvents(envelope: Envelope): readonly unknown[] {
  if (envelope.kind === 'event') return [envelope.body]
  if (envelope.kind === 'digest') return envelope.body as readonly unknown[]
  return []
}

/** Sums `events` and `omitted` per sender. */
export function totals(envelopes: readonly Envelope[]): Map<string, { events: number; omitted: number }> {
  const sums = new Map<string, { events: number; omitted: number }>()
  for (const envelope of envelopes) {
    const sum = sums.get(envelope.from) ?? { events: 0, omitted: 0 }
    sums.set(envelope.from, { events: sum.events + envelope.events, omitted: sum.omitted + envelope.omitted })
  }
  return sums
}

/** Throws unless the envelope's accounting holds: events = what its body holds + omitted. */
export function expectExact(envelope: Envelope): void {
  const held = bodyEvents(envelope).length
  const expected = envelope.kind === 'completion' || envelope.kind === 'control' ? 0 : held + envelope.omitted
  if (envelope.events !== expected) {
    throw new Error(
      `envelope ${envelope.id}: events ${envelope.events}, body ${held}, omitted ${envelope.omitted}`,
    )
  }
}
