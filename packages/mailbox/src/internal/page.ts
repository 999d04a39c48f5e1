import type { MailPage } from '../envelope.js'
import type { MailStore } from '../store.js'
import type { ReadOptions } from '../types.js'
import { sizeOf } from './batch.js'

/** The envelopes after `after` within `options`: the read behind `deliver`, `read` and `page`. */
export function pageOf(store: MailStore, session: string, after: number, options: ReadOptions): MailPage {
  const limit = Math.max(0, Math.floor(options.max ?? Number.POSITIVE_INFINITY))
  // One more than asked tells whether more follow without a second read.
  const read = store.read(session, after, limit + 1)
  let envelopes = read.length > limit ? read.slice(0, limit) : read
  if (options.maxBytes !== undefined) envelopes = envelopes.slice(0, fitting(envelopes, options.maxBytes))
  return { envelopes, next: envelopes.at(-1)?.seq ?? after, more: read.length > envelopes.length }
}

/** How many leading envelopes fit `maxBytes` of JSON; at least one, so a reader always moves on. */
function fitting(envelopes: readonly unknown[], maxBytes: number): number {
  let bytes = 0
  for (let i = 0; i < envelopes.length; i++) {
    bytes += sizeOf(envelopes[i])
    if (bytes > maxBytes) return Math.max(i, 1)
  }
  return envelopes.length
}
