import type { Envelope, Sender } from '../envelope.js'
import { Batch, type BatchContents, type BodyBound } from './batch.js'

/** True for the kinds folding may merge; completion and control envelopes are never folded away. */
export function isFoldable(envelope: Envelope): boolean {
  return envelope.kind === 'event' || envelope.kind === 'digest'
}

/**
 * What to fold to make room: every unread foldable envelope of the sender whose unread foldable
 * mail is oldest, among senders with at least two (folding one envelope makes no room). One
 * sender per digest keeps `from` true and each sender's `events` sum exact. `undefined` when no
 * sender has two: the bound is then exceeded rather than anything dropped.
 */
export function foldGroup(unread: readonly Envelope[]): readonly Envelope[] | undefined {
  // A Map iterates in insertion order: senders come by their oldest unread foldable envelope.
  const bySender = new Map<Sender, Envelope[]>()
  for (const envelope of unread) {
    if (!isFoldable(envelope)) continue
    const group = bySender.get(envelope.from)
    if (group === undefined) bySender.set(envelope.from, [envelope])
    else group.push(envelope)
  }
  for (const group of bySender.values()) if (group.length >= 2) return group
  return undefined
}

/** The contents of the digest that replaces `group`: every event counted, the newest kept. */
export function foldContents(group: readonly Envelope[], bound: BodyBound): BatchContents {
  const batch = new Batch(bound)
  for (const envelope of group) {
    if (envelope.kind === 'event') {
      batch.add(envelope.body)
      continue
    }
    // A digest's omitted events are older than its body (the body keeps the newest).
    batch.addOmitted(envelope.omitted)
    for (const event of envelope.body as readonly unknown[]) batch.add(event)
  }
  return batch.take()
}
