/**
 * Cuts a byte stream into lines without ever buffering an unbounded one: a line longer than
 * `maxLine` is reported once, at its end, with a bounded preview and its full length.
 */

/** How the framer reports a line. */
export interface LineSink {
  /** A complete line without its terminator (`\n`, and a `\r` before it), starting at byte `offset`. */
  line(bytes: Buffer, offset: number): void
  /** A line that exceeded the bound: `preview` holds its first bytes, `length` counts all of them. */
  overlong(preview: Buffer, offset: number, length: number): void
}

/** How much of an over-long line is kept for its report. */
export const OVERLONG_PREVIEW_BYTES = 4096

/** Splits pushed chunks into lines; `end()` flushes a last line that has no newline. */
export class LineFramer {
  readonly #sink: LineSink
  readonly #maxLine: number
  /** Pieces of the current unfinished line, while it is within the bound. */
  #pending: Buffer[] = []
  /** Bytes of the current unfinished line so far, kept or not. */
  #lineLength = 0
  #lineStart = 0
  /** Set once the current line passed the bound. */
  #preview: Buffer | undefined
  #offset: number

  constructor(sink: LineSink, maxLine: number, startOffset = 0) {
    this.#sink = sink
    this.#maxLine = maxLine
    this.#offset = startOffset
  }

  /** Bytes pushed so far (plus the start offset). */
  get offset(): number {
    return this.#offset
  }

  push(chunk: Buffer): void {
    const base = this.#offset
    this.#offset += chunk.length
    let start = 0
    for (;;) {
      const newline = chunk.indexOf(10, start)
      if (newline === -1) {
        if (start < chunk.length) this.#hold(chunk.subarray(start), base + start)
        return
      }
      if (this.#lineLength === 0) {
        // The whole line is inside this chunk: no copy.
        const length = newline - start
        if (length <= this.#maxLine) this.#sink.line(trimCr(chunk.subarray(start, newline)), base + start)
        else
          this.#sink.overlong(
            Buffer.from(chunk.subarray(start, Math.min(newline, start + OVERLONG_PREVIEW_BYTES))),
            base + start,
            length,
          )
      } else {
        this.#hold(chunk.subarray(start, newline), base + start)
        this.#flush()
      }
      start = newline + 1
    }
  }

  end(): void {
    if (this.#lineLength > 0) this.#flush()
  }

  #hold(piece: Buffer, offset: number): void {
    if (this.#lineLength === 0) this.#lineStart = offset
    this.#lineLength += piece.length
    if (this.#preview !== undefined) {
      if (this.#preview.length < OVERLONG_PREVIEW_BYTES) {
        const room = OVERLONG_PREVIEW_BYTES - this.#preview.length
        this.#preview = Buffer.concat([this.#preview, piece.subarray(0, room)])
      }
      return
    }
    if (this.#lineLength <= this.#maxLine) {
      // Copy: the stream reuses the chunk's memory.
      this.#pending.push(Buffer.from(piece))
      return
    }
    this.#preview = Buffer.from(Buffer.concat([...this.#pending, piece]).subarray(0, OVERLONG_PREVIEW_BYTES))
    this.#pending = []
  }

  #flush(): void {
    if (this.#preview !== undefined) {
      this.#sink.overlong(this.#preview, this.#lineStart, this.#lineLength)
    } else {
      const line = this.#pending.length === 1 ? this.#pending[0]! : Buffer.concat(this.#pending)
      this.#sink.line(trimCr(line), this.#lineStart)
    }
    this.#pending = []
    this.#lineLength = 0
    this.#preview = undefined
  }
}

function trimCr(bytes: Buffer): Buffer {
  return bytes.length > 0 && bytes[bytes.length - 1] === 13 ? bytes.subarray(0, bytes.length - 1) : bytes
}
