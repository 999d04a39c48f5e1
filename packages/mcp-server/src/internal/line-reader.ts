/** What a `LineReader` found: a line within the limit, or one over it that was discarded. */
export type Line =
  | { readonly kind: 'line'; readonly text: string }
  | {
      readonly kind: 'oversized'
      /** The line's length in bytes, without its line ending. */
      readonly bytes: number
      /** Its first bytes and last bytes, where a request id can be found without parsing it all. */
      readonly head: string
      readonly tail: string
    }

/** How much of an overlong line is kept at each end: enough for `{"jsonrpc":"2.0","id":"..."` and its mirror. */
const EDGE_BYTES = 512
const CR = 13
const LF = 10

/**
 * Splits a byte stream into `\n`-terminated lines (a `\r` before the `\n` is dropped) and never holds
 * more than `maxBytes` (plus one chunk) of a line: a line that grows past the limit is discarded as
 * it arrives, up to its newline, keeping only its two ends, and reported once with its full length.
 */
export class LineReader {
  private parts: Buffer[] = []
  private held = 0
  private discarding = false
  private discarded = 0
  private head: Buffer = Buffer.alloc(0)
  private tail: Buffer = Buffer.alloc(0)

  constructor(
    private readonly maxBytes: number,
    private readonly onLine: (line: Line) => void,
  ) {}

  /** Feeds one chunk; calls `onLine` for every line it completes, in order. */
  push(chunk: Buffer): void {
    let start = 0
    while (start < chunk.length) {
      const newline = chunk.indexOf(LF, start)
      const piece = chunk.subarray(start, newline === -1 ? chunk.length : newline)
      this.take(piece)
      if (newline === -1) return
      this.finish()
      start = newline + 1
    }
  }

  private take(piece: Buffer): void {
    if (this.discarding) {
      this.discarded += piece.length
      if (this.head.length < EDGE_BYTES) this.head = firstBytes([this.head, piece])
      this.tail = lastBytes([this.tail, piece], EDGE_BYTES + 1)
      return
    }
    // One byte of room for the `\r` of a `\r\n` ending, which is not part of the message.
    if (this.held + piece.length <= this.maxBytes + 1) {
      this.parts.push(piece)
      this.held += piece.length
      return
    }
    const parts = [...this.parts, piece]
    this.discarding = true
    this.discarded = this.held + piece.length
    this.head = firstBytes(parts)
    this.tail = lastBytes(parts, EDGE_BYTES + 1)
    this.parts = []
    this.held = 0
  }

  private finish(): void {
    if (this.discarding) {
      const cr = this.tail.at(-1) === CR ? 1 : 0
      const bytes = this.discarded - cr
      // The tail keeps one byte more, for the `\r`; a short line's head reaches its end, and its `\r`.
      const tail = lastBytes([this.tail.subarray(0, this.tail.length - cr)])
      this.report(bytes, this.head.subarray(0, bytes), tail)
    } else {
      const whole = Buffer.concat(this.parts, this.held)
      const line = whole.at(-1) === CR ? whole.subarray(0, -1) : whole
      if (line.length > this.maxBytes) this.report(line.length, firstBytes([line]), lastBytes([line]))
      else this.onLine({ kind: 'line', text: line.toString('utf8') })
    }
    this.parts = []
    this.held = 0
    this.discarding = false
    this.discarded = 0
  }

  private report(bytes: number, head: Buffer, tail: Buffer): void {
    this.onLine({ kind: 'oversized', bytes, head: head.toString('utf8'), tail: tail.toString('utf8') })
  }
}

// Both copy only the edge they keep, touching only the buffers at that end: the chunks they came from
// can then be freed, and a 10 MiB line costs no 10 MiB concat.

/** The first `EDGE_BYTES` of the buffers, copied. */
function firstBytes(buffers: readonly Buffer[]): Buffer {
  const kept: Buffer[] = []
  let size = 0
  for (const buffer of buffers) {
    if (size >= EDGE_BYTES) break
    kept.push(buffer.subarray(0, EDGE_BYTES - size))
    size += kept.at(-1)!.length
  }
  return Buffer.concat(kept, size)
}

/** The last `edge` bytes of the buffers, copied. */
function lastBytes(buffers: readonly Buffer[], edge = EDGE_BYTES): Buffer {
  const kept: Buffer[] = []
  let size = 0
  for (let i = buffers.length - 1; i >= 0 && size < edge; i--) {
    const buffer = buffers[i]!
    kept.unshift(buffer.subarray(Math.max(0, buffer.length - (edge - size))))
    size += kept[0]!.length
  }
  return Buffer.concat(kept, size)
}
