import { closeSync, constants, writeSync } from 'node:fs'
import type { TerminalSize } from '@toolvisor/launchers'
import type { HeldFile, SpillAllowance } from '@toolvisor/run-state'
import { AsciicastRecorder } from '../asciicast.js'

/** Bytes of lines gathered before they are written; a quiet program's are written after {@link FLUSH_MS}. */
const FLUSH_BYTES = 64 * 1024
const FLUSH_MS = 50

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
 * replays it (`asciinema play`). Lines are gathered and written at 64 KiB or after 50 ms of quiet,
 * never on the keystroke's path. Bounded as a spill file is: at its cap or when the disk budget
 * refuses, a marker line says so and the recording stops; a write that fails stops it too, and
 * the process goes on.
 */
export class Recording {
  readonly path: string
  readonly #recorder: AsciicastRecorder
  readonly #file: HeldFile
  readonly #cap: number
  readonly #allowance: SpillAllowance | undefined
  #fd: number | undefined
  #pending: string[] = []
  #pendingBytes = 0
  #written = 0
  #timer: NodeJS.Timeout | undefined
  #stopped = false

  constructor(options: RecordingOptions) {
    this.path = options.file.path
    this.#file = options.file
    this.#cap = options.cap
    this.#allowance = options.allowance
    this.#recorder = new AsciicastRecorder({
      columns: options.size.columns,
      rows: options.size.rows,
      ...(options.env ? { env: options.env } : {}),
    })
    // Written at once: the file is there from the start, whoever asks for it.
    this.#add(this.#recorder.header())
    this.#flush()
  }

  output(bytes: Uint8Array): void {
    if (!this.#stopped) this.#add(this.#recorder.output(bytes))
  }

  input(bytes: Uint8Array | string): void {
    if (!this.#stopped)
      this.#add(this.#recorder.input(typeof bytes === 'string' ? Buffer.from(bytes) : bytes))
  }

  resize(size: TerminalSize): void {
    if (!this.#stopped) this.#add(this.#recorder.resize(size.columns, size.rows))
  }

  /** Writes what is gathered and closes the file (the process ended). */
  close(): void {
    this.#flush()
    this.#stopped = true
    if (this.#fd !== undefined) closeSync(this.#fd)
    this.#fd = undefined
  }

  #add(line: string | undefined): void {
    if (line === undefined) return
    this.#pending.push(line)
    this.#pendingBytes += Buffer.byteLength(line) + 1
    if (this.#pendingBytes >= FLUSH_BYTES) this.#flush()
    else this.#timer ??= setTimeout(() => this.#flush(), FLUSH_MS).unref()
  }

  #flush(): void {
    clearTimeout(this.#timer)
    this.#timer = undefined
    if (this.#pending.length === 0) return
    const text = `${this.#pending.join('\n')}\n`
    this.#pending = []
    this.#pendingBytes = 0
    const bytes = Buffer.from(text)
    const room = Math.min(bytes.length, this.#cap - this.#written)
    const granted = this.#allowance === undefined ? room : this.#allowance.take(room)
    if (granted < bytes.length) {
      const why = this.#written + bytes.length > this.#cap ? 'its cap' : "the run's disk budget"
      // Whole lines only (the file stays valid asciicast), then the marker, past the bound by its few bytes.
      const whole = bytes.subarray(0, granted > 0 ? bytes.lastIndexOf(0x0a, granted - 1) + 1 : 0)
      this.#write(
        Buffer.concat([whole, Buffer.from(`${this.#recorder.marker(`recording stopped: ${why}`)}\n`)]),
      )
      this.#stopped = true
      return
    }
    this.#write(bytes)
  }

  #write(bytes: Buffer): void {
    try {
      this.#fd ??= this.#file.open(
        constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_APPEND,
      )
      writeSync(this.#fd, bytes)
      this.#written += bytes.length
    } catch {
      // A full disk or a removed directory: the recording stops, the process is not disturbed.
      this.#stopped = true
    }
  }
}
