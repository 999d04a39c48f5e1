import type { SpillCut } from './spill-cut.js'

/** Counters of one process. */
export interface ProcessCounters {
  readonly events: number
  readonly invalidEvents: number
  readonly stdoutBytes: number
  readonly stderrBytes: number
  readonly stdinEvents: number
  /** Events no longer in the ring (still readable from the spill file unless it failed). */
  readonly elided: number
}

/** A bounded capture of one output stream. */
export interface CapturedOutput {
  /** The first bytes (up to the result bound). */
  readonly head: Buffer
  /** The last bytes (up to the tail bound). */
  readonly tail: Buffer
  readonly totalBytes: number
  readonly truncated: boolean
  /** The spill file, once the stream passed the bound: every byte, unless `spillCut` says otherwise. */
  readonly spillPath?: string
  /** Where the spill file stops short of the stream (its cap, or the disk budget), once it did. */
  readonly spillCut?: SpillCut
}
