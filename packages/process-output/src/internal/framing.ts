import { isAscii } from 'node:buffer'

/**
 * Cuts a byte stream into lines without ever buffering an unbounded one: a line longer than
 * `maxLine` is reported once, at its end, with a bounded preview and its full length.
 */

/** How the framer reports a line. */
export interface LineSink {
  /**
   * A complete line without its terminator (`\n`, and a `\r` before it): bytes `start` to `end` of
   * `buffer`, starting at byte `offset` of the stream. A range, not a slice: making a `Buffer` view
   * per line costs about as much as decoding it. The bytes are valid during the call only. When the
   * whole chunk is ASCII, `ascii` is it decoded once: the line is `ascii.slice(start, end)`.
   */
  line(buffer: Buffer, start: number, end: number, offset: number, ascii?: string): void
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
    const length = chunk.length
    let start = 0
    if (this.#lineLength > 0) {
      // The line held from earlier chunks ends here, or goes on past this chunk.
      const newline = chunk.indexOf(10)
      if (newline === -1) {
        if (length > 0) this.#hold(chunk, base)
        return
      }
      this.#hold(chunk.subarray(0, newline), base)
      this.#flush()
      start = newline + 1
    }
    // Every line that starts in this chunk: locals only, one sink call per line, no copy. An ASCII
    // chunk (the common case) is decoded once instead of once per line.
    const sink = this.#sink
    const maxLine = this.#maxLine
    const ascii = start < length && isAscii(chunk) ? chunk.toString('latin1') : undefined
    while (start < length) {
      const newline = ascii === undefined ? chunk.indexOf(10, start) : ascii.indexOf('\n', start)
      if (newline === -1) {
        this.#hold(chunk.subarray(start), base + start)
        return
      }
      if (newline - start <= maxLine) {
        sink.line(
          chunk,
          start,
          newline > start && chunk[newline - 1] === 13 ? newline - 1 : newline,
          base + start,
          ascii,
        )
      } else {
        const preview = chunk.subarray(start, Math.min(newline, start + OVERLONG_PREVIEW_BYTES))
        sink.overlong(Buffer.from(preview), base + start, newline - start)
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
      // A view, not a copy: a chunk pushed here is never written to again (a pipe read allocates
      // a fresh one, a spill read returns its own), and the joined line is copied once, at its end.
      this.#pending.push(piece)
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
      const end = line.length > 0 && line[line.length - 1] === 13 ? line.length - 1 : line.length
      this.#sink.line(line, 0, end, this.#lineStart)
    }
    this.#pending = []
    this.#lineLength = 0
    this.#preview = undefined
  }
}
