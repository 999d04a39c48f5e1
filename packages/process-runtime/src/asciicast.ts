/**
 * A terminal's session as an asciicast v2 recording (the format `asciinema play` replays): a header
 * line, then one line per event, `[seconds, "o", text]` for what the program showed, `"i"` for the
 * keystrokes sent, `"r"` for a resize, `"m"` for a marker. The recorder makes the lines; where they
 * are kept is the caller's (the runtime keeps a terminal's in its spill directory, `ID.cast`).
 */

/** How a recording starts. */
export interface AsciicastOptions {
  readonly columns: number
  readonly rows: number
  /** Milliseconds since the epoch, now. Default `Date.now`. */
  readonly now?: () => number
  /** The terminal's `TERM` and the like, as the header's `env` (only strings are written). */
  readonly env?: Readonly<Record<string, string>>
  readonly title?: string
}

/**
 * Makes the lines of one recording. Output and input are decoded as UTF-8 across calls, so a
 * character split between two reads is written whole in the later event; bytes that are not UTF-8
 * become U+FFFD, as a terminal shows them.
 */
export class AsciicastRecorder {
  readonly #now: () => number
  readonly #start: number
  readonly #decoders = { o: new TextDecoder('utf-8'), i: new TextDecoder('utf-8') }
  readonly #header: string

  constructor(options: AsciicastOptions) {
    this.#now = options.now ?? Date.now
    this.#start = this.#now()
    this.#header = JSON.stringify({
      version: 2,
      width: options.columns,
      height: options.rows,
      timestamp: Math.floor(this.#start / 1000),
      ...(options.env ? { env: options.env } : {}),
      ...(options.title ? { title: options.title } : {}),
    })
  }

  /** The first line of the recording. */
  header(): string {
    return this.#header
  }

  /** The event line of what the program showed, or undefined when the bytes end mid-character. */
  output(bytes: Uint8Array): string | undefined {
    return this.#event('o', bytes)
  }

  /** The event line of keystrokes sent, or undefined when the bytes end mid-character. */
  input(bytes: Uint8Array): string | undefined {
    return this.#event('i', bytes)
  }

  /** The event line of a resize. */
  resize(columns: number, rows: number): string {
    return JSON.stringify([this.#seconds(), 'r', `${columns}x${rows}`])
  }

  /** The event line of a marker (`asciinema play` stops or jumps there): why the recording stops. */
  marker(label: string): string {
    return JSON.stringify([this.#seconds(), 'm', label])
  }

  #event(kind: 'o' | 'i', bytes: Uint8Array): string | undefined {
    const text = this.#decoders[kind].decode(bytes, { stream: true })
    return text === '' ? undefined : JSON.stringify([this.#seconds(), kind, text])
  }

  /** Seconds since the start, to the microsecond (as asciinema writes them). */
  #seconds(): number {
    return Math.round((this.#now() - this.#start) * 1000) / 1e6
  }
}
