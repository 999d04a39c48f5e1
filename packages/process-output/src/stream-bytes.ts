import type { SpillCut } from '@toolvisor/run-state'
import type { ProcessOutputView } from './view.js'

/** Bytes of one output stream of a process, as a bounded read returns them. */
export interface StreamBytes {
  /** The bytes returned: the newest ones after the position the read started at. */
  readonly bytes: Buffer
  /** The byte offset of the first byte returned. */
  readonly from: number
  /**
   * Bytes after the position the read started at that it did not return: over its bound (the
   * newest are kept), or no longer readable. The spill file holds them unless it failed.
   */
  readonly skipped: number
  /** Bytes the stream wrote so far. */
  readonly total: number
  /** The stream's spill file, once it spilled: every byte, unless `spillCut` says otherwise. */
  readonly spillPath?: string
  /** Where the spill file stops short of the stream (its cap, or the disk budget), once it did. */
  readonly spillCut?: SpillCut
}

/** What to read of a stream. */
export interface StreamRange {
  /** Where the read starts (a reader's cursor). */
  readonly from: number
  /** The most bytes returned; the newest are kept, the older ones counted in `skipped`. */
  readonly max: number
  /**
   * Text: the read never starts inside a UTF-8 character, and, unless `final`, never ends inside
   * one either (the rest of it is still on its way: the next read returns it whole).
   */
  readonly utf8?: boolean
  /** The stream ended: everything it wrote is returned (within `max`). */
  readonly final?: boolean
}

/** The position after the bytes a read returns (where the reader's next read starts). */
export function endOf(read: StreamBytes): number {
  return read.from + read.bytes.length
}

/**
 * The newest bytes of `stream` after `range.from`, at most `range.max`: what a reader that fell
 * behind is shown, with how much it missed. One implementation for the task registry's cursors and
 * for callers that read a finished process's tail.
 */
export function newestBytes(
  output: ProcessOutputView,
  stream: 'stdout' | 'stderr',
  range: StreamRange,
): StreamBytes {
  const captured = stream === 'stdout' ? output.stdout() : output.stderr()
  const total = captured.totalBytes
  const spill = {
    ...(captured.spillPath !== undefined ? { spillPath: captured.spillPath } : {}),
    ...(captured.spillCut !== undefined ? { spillCut: captured.spillCut } : {}),
  }
  const from = Math.min(Math.max(0, range.from), total)
  let end = total
  if (range.utf8 && !range.final && end > from) {
    end -= incompleteTail(output.bytes(stream, Math.max(from, end - 3), end - Math.max(from, end - 3)))
  }
  let start = Math.max(from, end - Math.max(0, range.max))
  let bytes = output.bytes(stream, start, end - start)
  if (bytes.length < end - start) {
    // Not all of it is kept (past a cut spill file, or the file is gone): the newest bytes, from
    // the tail in memory.
    start = Math.max(start, total - captured.tail.length)
    bytes = output.bytes(stream, start, end - start)
  }
  if (bytes.length < end - start)
    return { bytes: Buffer.alloc(0), from: end, skipped: end - from, total, ...spill }
  if (range.utf8 && start > from) {
    // A kept tail that starts inside a character starts at the next one.
    let lead = 0
    while (lead < Math.min(3, bytes.length) && (bytes[lead]! & 0xc0) === 0x80) lead++
    bytes = bytes.subarray(lead)
    start += lead
  }
  return { bytes, from: start, skipped: start - from, total, ...spill }
}

/** How many bytes at the end of `tail` (at most 3) begin a UTF-8 character not yet complete. */
function incompleteTail(tail: Buffer): number {
  for (let back = 1; back <= Math.min(3, tail.length); back++) {
    const byte = tail[tail.length - back]!
    if ((byte & 0xc0) === 0x80) continue // a continuation byte: look further back
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1
    return length > back ? back : 0
  }
  return 0
}
