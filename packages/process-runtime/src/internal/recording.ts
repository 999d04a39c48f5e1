import { closeSync, constants, write, writeSync } from 'node:fs'
import type { TerminalSize } from '@toolvisor/launchers'
import type { HeldFile, SpillAllowance } from '@toolvisor/run-state'
import { AsciicastRecorder } from '../asciicast.js'

/** Bytes gathered before they are written, and the quiet after which they are written anyway. */
const FLUSH_BYTES = 64 * 1024
const FLUSH_MS = 50
/** Bytes that may wait behind a write under way; past them the disk is not keeping up and the recording stops. */
const MAX_WAITING = 8 * 1024 * 1024

/** One thing that happened on the terminal, kept until it is written. */
type Happened =
  | { readonly at: number; readonly kind: 'o' | 'i'; readonly data: Uint8Array }
  | { readonly at: number; readonly kind: 'r'; readonly data: TerminalSize }

/** What a recording needs. */
export interface RecordingOptions {
  readonly file: HeldFile
  readonly size: TerminalSize
  /** The most bytes the file may hold (the runtime's `spillBytes`, as a spill file). */
  readonly cap: number
  /** The disk budget, asked before each write, as the spill files ask it. */
  readonly allowance?: SpillAllowance
  /** `TERM` and `SHELL` of the launch, for the header. */
  readonly env?: Readonly<Record<string, string>>
}

/**
 * A terminal's session kept as an asciicast v2 file in the run's spill directory (`ID.cast`, mode
 * 0600): what the program showed, the keystrokes typed and the resizes, timed, so an operator
 * replays it (`asciinema play`). What happens is kept as it comes, and made into lines and written
 * at 64 KiB, or once the terminal was quiet for 50 ms, by the thread pool: never work between a
 * keystroke and its echo. Bounded as a spill file is: at its cap or when the disk budget
 * refuses, a marker line says so and the recording stops; a write that fails stops it too, and
 * the process goes on.
 */
export class Recording {
  readonly path: string
  readonly #recorder: AsciicastRecorder
  readonly #cap: number
  readonly #allowance: SpillAllowance | undefined
  #fd: number | undefined
  /** What came since the last write, as it came: made into lines when written, not on its way. */
  #pending: Array<Happened> = []
  #pendingBytes = 0
  /** The time of the happening being made into a line (the recorder's clock). */
  #at = 0
  #written = 0
  #timer: NodeJS.Timeout | undefined
  /** The write under way: one at a time, so the lines land in order. */
  #writing: Promise<void> | undefined
  #stopped = false
  #closed = false

  constructor(options: RecordingOptions) {
    this.path = options.file.path
    this.#cap = options.cap
    this.#allowance = options.allowance
    this.#at = Date.now()
    this.#recorder = new AsciicastRecorder({
      columns: options.size.columns,
      rows: options.size.rows,
      now: () => this.#at,
      ...(options.env ? { env: options.env } : {}),
    })
    // Made, and its header written, at once: the file is there from the start, whoever asks.
    const header = Buffer.from(`${this.#recorder.header()}\n`)
    try {
      this.#fd = options.file.open(
        constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_APPEND,
      )
      if (this.#take(header).granted === header.length) writeSync(this.#fd, header)
      else this.#stopped = true
    } catch {
      this.#stopped = true
    }
  }

  output(bytes: Uint8Array): void {
    this.#add('o', bytes)
  }

  input(bytes: Uint8Array | string): void {
    this.#add('i', typeof bytes === 'string' ? Buffer.from(bytes) : bytes)
  }

  resize(size: TerminalSize): void {
    this.#add('r', size)
  }

  /** Resolves once every line gathered so far is in the file. */
  async drained(): Promise<void> {
    this.#flush()
    while (this.#writing !== undefined) await this.#writing
  }

  /** Closes the file once what is under way is written (the process ended); nothing more is recorded. */
  close(): void {
    if (this.#closed) return
    this.#closed = true
    void this.drained().then(() => {
      this.#stopped = true
      if (this.#fd !== undefined) closeSync(this.#fd)
      this.#fd = undefined
    })
  }

  #add(kind: Happened['kind'], data: Uint8Array | TerminalSize): void {
    if (this.#stopped) return
    const at = Date.now()
    this.#pending.push({ at, kind, data } as Happened)
    this.#pendingBytes += data instanceof Uint8Array ? data.length : 16
    if (this.#pendingBytes > MAX_WAITING) this.#giveUp('the disk did not keep up')
    else if (this.#pendingBytes >= FLUSH_BYTES) this.#flush()
    else if (this.#timer === undefined) this.#arm(FLUSH_MS)
  }

  /** Stops the recording where it is written to: what waits is dropped, a marker says why. */
  #giveUp(why: string): void {
    clearTimeout(this.#timer)
    this.#timer = undefined
    this.#stopped = true
    this.#pending = []
    this.#pendingBytes = 0
    this.#at = Date.now()
    const marker = Buffer.from(`${this.#recorder.marker(`recording stopped: ${why}`)}\n`)
    const after = this.#writing ?? Promise.resolve()
    this.#writing = after
      .then(() => this.#write(marker))
      .finally(() => {
        this.#writing = undefined
      })
  }

  /** Writes once nothing happened for `FLUSH_MS` (one timer, moved on while things happen). */
  #arm(ms: number): void {
    this.#timer = setTimeout(() => {
      const quiet = Date.now() - (this.#pending.at(-1)?.at ?? 0)
      if (quiet < FLUSH_MS) this.#arm(FLUSH_MS - quiet)
      else this.#flush()
    }, ms).unref()
  }

  /** The lines of what is pending, in order (a character split between two reads is written whole, later). */
  #lines(): string {
    let text = ''
    for (const happened of this.#pending) {
      this.#at = happened.at
      const line =
        happened.kind === 'r'
          ? this.#recorder.resize(happened.data.columns, happened.data.rows)
          : happened.kind === 'o'
            ? this.#recorder.output(happened.data)
            : this.#recorder.input(happened.data)
      if (line !== undefined) text += `${line}\n`
    }
    return text
  }

  /** Hands the gathered lines to a write off the event loop (the thread pool's), after the one under way. */
  #flush(): void {
    clearTimeout(this.#timer)
    this.#timer = undefined
    if (this.#pending.length === 0 || this.#writing !== undefined || this.#stopped) return
    const bytes = Buffer.from(this.#lines())
    this.#pending = []
    this.#pendingBytes = 0
    const { granted, room } = this.#take(bytes)
    const why = room < bytes.length ? 'its cap' : "the run's disk budget"
    const kept = granted === bytes.length ? bytes : this.#cut(bytes, granted, why)
    this.#writing = this.#write(kept).finally(() => {
      this.#writing = undefined
      if (this.#pending.length > 0) this.#flush()
    })
  }

  /** What the cap leaves room for of `bytes`, and what the disk budget grants of it (counted). */
  #take(bytes: Buffer): { granted: number; room: number } {
    const room = Math.max(0, Math.min(bytes.length, this.#cap - this.#written))
    const granted = this.#allowance === undefined ? room : this.#allowance.take(room)
    this.#written += granted
    return { granted, room }
  }

  /** What the bound keeps of `bytes`: whole lines, then the marker saying why it stops here. */
  #cut(bytes: Buffer, granted: number, why: string): Buffer {
    this.#stopped = true
    this.#pending = []
    const whole = bytes.subarray(0, granted > 0 ? bytes.lastIndexOf(0x0a, granted - 1) + 1 : 0)
    return Buffer.concat([whole, Buffer.from(`${this.#recorder.marker(`recording stopped: ${why}`)}\n`)])
  }

  async #write(bytes: Buffer): Promise<void> {
    const fd = this.#fd
    if (fd === undefined) return
    try {
      await new Promise<void>((resolve, reject) =>
        write(fd, bytes, (error) => (error ? reject(error) : resolve())),
      )
    } catch {
      // A full disk or a removed directory: the recording stops, the process is not disturbed.
      this.#stopped = true
      this.#pending = []
    }
  }
}
