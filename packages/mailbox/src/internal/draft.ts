/** Envelopes as the mailbox makes them from what a poster or a source gave. */
import type { Envelope } from '../envelope.js'

/** An envelope before the mailbox gives it a seq, a time and (when the poster gave none) an id. */
export type Draft = Pick<Envelope, 'from' | 'kind' | 'body' | 'events' | 'omitted'> & {
  readonly id?: string | undefined
}

/** The seqs of envelopes, in their order. */
export function seqsOf(envelopes: readonly Envelope[]): number[] {
  return envelopes.map((envelope) => envelope.seq)
}

/** A new envelope at `seq`, frozen: its id the poster's, else `m<seq>`. */
export function envelopeOf(seq: number, draft: Draft): Envelope {
  return Object.freeze({
    id: draft.id ?? `m${seq}`,
    seq,
    from: draft.from,
    at: new Date().toISOString(),
    kind: draft.kind,
    body: draft.body,
    events: draft.events,
    omitted: draft.omitted,
  })
}
