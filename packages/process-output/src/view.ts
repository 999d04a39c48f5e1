import type { SpillCut } from '@toolvisor/run-state'
import type { EventPage, SequencedEvent } from './internal/event-log.js'

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

/**
 * What a process wrote, as callers read it (`ManagedProcess.output`): its events, stderr lines and
 * the bytes of both streams, bounded in memory and read back from the spill files past that. A
 * service's holds the events of every run as one sequence, and its current run's streams.
 */
export interface ProcessOutputView {
  /** The counters of the process: events, bytes of each stream, stdin events, events elided. */
  counters(): ProcessCounters
  /** About how many bytes the process holds in memory (its ring, heads and tails of output). */
  heldBytes(): number
  /** The last `n` output events, oldest first. */
  tail(n: number): SequencedEvent[]
  /** The last `n` stderr lines, oldest first. */
  stderrLines(n: number): string[]
  /** Up to `max` events from absolute position `from` (ring, then spill file). */
  read(from: number, max: number): EventPage
  /** stdout's bounded capture (what waits in memory for its spill file is written there first). */
  stdout(): CapturedOutput
  /** stderr's bounded capture (what waits in memory for its spill file is written there first). */
  stderr(): CapturedOutput
  /**
   * Up to `length` bytes of a stream from byte `offset` of everything it wrote (memory, else the
   * spill file); fewer at the end, none when they cannot be read back (the spill file is gone).
   */
  bytes(stream: 'stdout' | 'stderr', offset: number, length: number): Buffer
  /** Subscribes to output events; returns the unsubscription. */
  onEvent(listener: (event: SequencedEvent) => void): () => void
}
