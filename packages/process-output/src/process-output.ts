import type { ProcessSpec } from '@toolvisor/describe-v2'
import { RuntimeError } from '@toolvisor/launchers'
import type { HeldDirectory } from '@toolvisor/run-state'
import { lineKeptText, type SpillAllowance } from '@toolvisor/run-state'
import { createDecoder, type Decoder } from './internal/decode.js'
import { EventLog, type EventPage, type SequencedEvent } from './internal/event-log.js'
import { LineFramer } from './internal/framing.js'
import { Ring } from './internal/ring.js'
import { SpillingOutput } from './internal/spilling-output.js'
import type { SpillStages } from './stages.js'
import type { CapturedOutput, ProcessCounters, ProcessOutputView } from './view.js'

/** Longest stderr line kept whole in the stderr ring. */
const MAX_STDERR_LINE = 16 * 1024

/** The bounds of a process's output: the runtime's options of the same names (`RuntimeOptions`). */
export interface OutputBounds {
  /** Output events kept in the ring. */
  readonly ringEvents: number
  /** The most stdout bytes the ring's events may stand for; older ones are read back from the spill file. */
  readonly ringBytes: number
  /** stderr lines kept. */
  readonly ringStderrLines: number
  /** Bytes of each stream kept in memory for results; the rest spills. */
  readonly resultBytes: number
  /** Longest stdout line kept whole. */
  readonly maxLineBytes: number
  /** Bytes kept of the end of each stream for error reports. */
  readonly tailBytes: number
  /** The most bytes one stream's spill file keeps. */
  readonly spillBytes: number
}

/** What a process's output needs to know. */
export interface OutputOptions {
  readonly id: string
  /** The run's spill directory, held: spill files are opened through it. */
  readonly spillDir: HeldDirectory
  /** The disk budget every spill write asks first (the runtime's `DiskBudget`). */
  readonly allowance?: SpillAllowance
  readonly options: OutputBounds
  /** The in-memory bound of each stream before it spills, over `options.resultBytes`. */
  readonly resultBytes?: number
  readonly spec: ProcessSpec
  /** Spill stages for a bulk stdout, when the spawner has them (`Spawner.spillStages`). */
  readonly spillStages?: ((fd: number) => SpillStages | undefined) | undefined
  /** The ready line was seen (it is not an event). */
  readonly onReady: () => void
  /** An event arrived (after its listeners ran): the idle timer restarts on it. */
  readonly onActivity: () => void
  /** The events written to its stdin so far (counted where they are written), for `counters()`. */
  readonly stdinEvents: () => number
}

/**
 * Everything a process wrote: stdout (a spill file past the result bound, framed and decoded
 * into events kept in a ring) and stderr (a spill file and a ring of lines), with the listeners of
 * its events. One job: turning bytes into what callers read, bounded (`ProcessOutputView`).
 */
export class ProcessOutput implements ProcessOutputView {
  readonly #events: EventLog
  readonly #stdout: SpillingOutput
  readonly #stderr: SpillingOutput
  readonly #stderrLines: Ring<string>
  readonly #decoder: Decoder
  readonly #stderrFramer: LineFramer
  readonly #onActivity: () => void
  readonly #stdinEvents: () => number
  /** An array, not a Set: iterating a Set allocates an iterator per event on the hot path. */
  #listeners: Array<(event: SequencedEvent) => void> = []
  #invalid = 0

  constructor(options: OutputOptions) {
    const { options: runtime, spec } = options
    const spill = (stream: string) => options.spillDir.file(`${options.id}.${stream}`)
    const bounds = {
      limit: options.resultBytes ?? runtime.resultBytes,
      tailBytes: runtime.tailBytes,
      cap: runtime.spillBytes,
      ...(options.allowance ? { allowance: options.allowance } : {}),
    }
    const stages = bulkStdout(spec) ? options.spillStages : undefined
    this.#stdout = new SpillingOutput({ ...bounds, spill: spill('stdout'), stages })
    this.#stderr = new SpillingOutput({ ...bounds, spill: spill('stderr') })
    const stdout = this.#stdout
    const decode = {
      output: spec.output,
      maxLine: runtime.maxLineBytes,
      ready: spec.ready,
      // An overlong line says what the spill file holds of it (its bytes are all appended by then).
      lineKept: (offset: number, length: number) =>
        lineKeptText({ cut: stdout.spillCut, failed: stdout.spillError !== undefined }, offset, length),
    }
    this.#events = new EventLog({
      capacity: runtime.ringEvents,
      maxBytes: runtime.ringBytes,
      decode,
      stdout: this.#stdout,
    })
    this.#onActivity = options.onActivity
    this.#stdinEvents = options.stdinEvents
    this.#decoder = createDecoder(decode, {
      event: (value, offset, invalid) => this.#event(value, offset, invalid),
      ready: (offset) => {
        this.#events.markReady(offset)
        options.onReady()
      },
    })
    this.#stderrLines = new Ring(runtime.ringStderrLines)
    this.#stderrFramer = new LineFramer(
      {
        line: (buffer, start, end) => this.#stderrLines.push(buffer.toString('utf8', start, end)),
        overlong: (preview, _offset, length) =>
          this.#stderrLines.push(`${preview.toString('utf8')}… (line of ${length} bytes, cut)`),
      },
      MAX_STDERR_LINE,
    )
  }

  counters(): ProcessCounters {
    return {
      events: this.#events.total,
      invalidEvents: this.#invalid,
      stdoutBytes: this.#stdout.total,
      stderrBytes: this.#stderr.total,
      stdinEvents: this.#stdinEvents(),
      elided: this.#events.first,
    }
  }

  pushStdout(chunk: Buffer): void {
    this.#stdout.append(chunk)
    this.#decoder.push(chunk)
  }

  pushStderr(chunk: Buffer): void {
    this.#stderr.append(chunk)
    this.#stderrFramer.push(chunk)
  }

  /** Both streams ended: the last partial lines become events and stderr lines. */
  end(): void {
    this.#decoder.end()
    this.#stderrFramer.end()
  }

  /** Bytes its spill files were given (stdout and stderr). */
  spillBytes(): number {
    return this.#stdout.spilledBytes + this.#stderr.spilledBytes
  }

  /** Resolves once the spill files hold every byte written so far (`close()` writes the last stage). */
  async drained(): Promise<void> {
    await Promise.all([this.#stdout.drained(), this.#stderr.drained()])
  }

  /** Closes the spill files (what was written stays readable). */
  close(): void {
    this.#stdout.close()
    this.#stderr.close()
  }

  onEvent(listener: (event: SequencedEvent) => void): () => void {
    this.#listeners = [...this.#listeners, listener]
    return () => {
      this.#listeners = this.#listeners.filter((other) => other !== listener)
    }
  }

  tail(n: number): SequencedEvent[] {
    return this.#events.last(n)
  }

  stderrLines(n: number): string[] {
    return this.#stderrLines.last(n)
  }

  read(from: number, max: number): EventPage {
    return this.#events.read(from, max)
  }

  stdout(): CapturedOutput {
    return capture(this.#stdout)
  }

  stderr(): CapturedOutput {
    return capture(this.#stderr)
  }

  bytes(stream: 'stdout' | 'stderr', offset: number, length: number): Buffer {
    return (stream === 'stdout' ? this.#stdout : this.#stderr).read(offset, length)
  }

  heldBytes(): number {
    return this.#events.heldBytes + this.#stdout.heldBytes + this.#stderr.heldBytes
  }

  /** Moves the events and output of a finished process to its spill files, freeing the memory. */
  compact(): void {
    if (this.#stdout.compact()) this.#events.compact()
    this.#stderr.compact()
  }

  /** The error of a start that never became ready, with the last bytes of both streams. */
  notReady(tool: string, why: string): RuntimeError {
    const out = this.#stdout.tail(2048).toString('utf8')
    const err = this.#stderr.tail(2048).toString('utf8')
    const tails = `--- stdout (last bytes) ---\n${out}\n--- stderr (last bytes) ---\n${err}`
    return new RuntimeError('RUNTIME_ERR_NOT_READY', `${tool} ${why}\n${tails}`)
  }

  #event(value: unknown, offset: number, invalid: boolean): void {
    const seq = this.#events.append(value, offset)
    if (invalid) this.#invalid++
    this.#onActivity()
    const listeners = this.#listeners
    if (listeners.length === 0) return
    const event: SequencedEvent = { seq, value }
    for (let i = 0; i < listeners.length; i++) {
      try {
        listeners[i]!(event)
      } catch {
        // A listener's bug must not stop the process's output from being read.
      }
    }
  }
}

/**
 * True for a `chunks` stdout, the bulk case: chunks are events as read, so it is read into slabs
 * (decision 0083) and its spill file written past the page cache (decision 0084). Line framings
 * split every read into lines and parse them: there slabs and stages cost more than they save.
 */
export function bulkStdout(spec: ProcessSpec): boolean {
  return spec.output.framing === 'chunks'
}

/** A stream's bounded capture, as `ProcessOutputView.stdout()`/`stderr()` return it. */
function capture(output: SpillingOutput): CapturedOutput {
  // Whoever asks may read the spill file next: what waits in memory for it goes there first.
  output.flush()
  const spillPath = output.spillPath
  const spillCut = output.spillCut
  return {
    head: output.head(),
    tail: output.tail(),
    totalBytes: output.total,
    truncated: output.truncated,
    ...(spillPath ? { spillPath } : {}),
    ...(spillCut ? { spillCut } : {}),
  }
}
