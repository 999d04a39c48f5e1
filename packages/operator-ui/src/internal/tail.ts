import type { ManagedProcess, ProcessExit, ProcessOutputView } from '@toolvisor/process-runtime'
import { eventRun, stderrRun } from './reads.js'
import type { EventStream } from './sse.js'

/** Where a tail starts: an event position and a stderr byte offset. */
export interface TailStart {
  readonly events: number
  readonly stderr: number
}

/** Events one message carries at most. */
const EVENTS_PER_MESSAGE = 200
/** stderr bytes one message carries at most. */
const STDERR_PER_MESSAGE = 64 * 1024
/** A tail further behind than this many events jumps to the newest (and says how many it skipped). */
const EVENTS_BEHIND = 5000
/** ... or this many stderr bytes. */
const STDERR_BEHIND = 1024 * 1024
/** Bytes of a terminal's stream one message carries at most. */
const TERMINAL_PER_MESSAGE = 64 * 1024
/** A terminal further behind than this jumps to its newest {@link TERMINAL_REPLAY} bytes. */
const TERMINAL_BEHIND = 1024 * 1024
/** Where a terminal's view starts: its newest bytes (full-screen programs redraw). */
const TERMINAL_REPLAY = 256 * 1024
/** Output arriving within this window goes out in one message. */
const BATCH_MS = 40
/** How often stderr is looked at (the runtime reports events as they come, not stderr). */
const STDERR_LOOK_MS = 250

/** Where a tail starts by default: the last 100 events and the last 8 KiB of stderr. */
export function defaultStart(output: ProcessOutputView): TailStart {
  const counters = output.counters()
  return { events: Math.max(0, counters.events - 100), stderr: Math.max(0, counters.stderrBytes - 8192) }
}

/**
 * A live tail of one process over an event stream: `events` and `stderr` messages as output
 * arrives (events at once, stderr within a quarter second), each with an id an `EventSource`
 * resumes from after a reconnect; then `end` with the exit, and the stream ends. A client that
 * reads slowly is waited for (nothing queues without bound); one far behind jumps to the newest
 * output, and the message says so (`skipped`), so the page can reset and page back from there.
 */
export class Tail {
  readonly #stream: EventStream
  readonly #output: ProcessOutputView
  #events: number
  #stderr: number
  #timer: NodeJS.Timeout | undefined
  #flushing = false
  #again = false
  #exit: ProcessExit | undefined
  /** The terminal the process runs on, and where its view's bytes are: its stream, raw, for xterm.js. */
  readonly #terminal: ManagedProcess['terminal']
  #shown = 0

  constructor(stream: EventStream, process: ManagedProcess, start: TailStart) {
    this.#stream = stream
    this.#output = process.output
    this.#terminal = process.terminal
    this.#shown = Math.max(0, process.output.counters().stdoutBytes - TERMINAL_REPLAY)
    this.#events = start.events
    this.#stderr = start.stderr
    const unsubscribe = this.#output.onEvent(() => this.#kick())
    const look = setInterval(() => {
      if (this.#output.counters().stderrBytes > this.#stderr) this.#kick()
    }, STDERR_LOOK_MS)
    look.unref()
    stream.onClose(() => {
      unsubscribe()
      clearInterval(look)
      clearTimeout(this.#timer)
    })
    void process.exit.then((exit) => {
      this.#exit = exit
      this.#kick()
    })
    this.#kick()
  }

  #kick(): void {
    if (this.#flushing) {
      this.#again = true
      return
    }
    if (this.#timer !== undefined || this.#stream.closed) return
    this.#timer = setTimeout(() => {
      this.#timer = undefined
      void this.#flush()
    }, BATCH_MS)
  }

  async #flush(): Promise<void> {
    this.#flushing = true
    try {
      for (;;) {
        this.#again = false
        await this.#stream.drained()
        if (this.#stream.closed) return
        const sent = this.#sendTerminal() || this.#sendEvents() || (await this.#sendStderr())
        if (!sent && !this.#again) break
      }
      if (this.#exit !== undefined) {
        this.#stream.send('end', { exit: this.#exit }, this.#id())
        this.#stream.close()
      }
    } finally {
      this.#flushing = false
    }
  }

  /**
   * On a terminal: the next bytes of what it shows, base64, with its size, for the page's
   * xterm.js to render as the terminal does (read-only); true when it sent some.
   */
  #sendTerminal(): boolean {
    const terminal = this.#terminal
    if (terminal === undefined) return false
    const from = this.#shown
    const total = this.#output.counters().stdoutBytes
    if (total <= from) return false
    const start = total - from > TERMINAL_BEHIND ? total - TERMINAL_REPLAY : from
    const bytes = this.#output.bytes('stdout', start, Math.min(TERMINAL_PER_MESSAGE, total - start))
    if (bytes.length === 0) return false
    this.#shown = start + bytes.length
    const { columns, rows } = terminal.size
    const skipped = start > from ? { skipped: start - from } : {}
    this.#stream.send('terminal', { from: start, data: bytes.toString('base64'), columns, rows, ...skipped })
    return true
  }

  /** Sends the next events, if any; true when it sent some. */
  #sendEvents(): boolean {
    const from = this.#events
    const total = this.#output.counters().events
    if (total <= from) return false
    const start = total - from > EVENTS_BEHIND ? total - 100 : from
    const run = eventRun(this.#output, start, EVENTS_PER_MESSAGE)
    if (run.next <= from) return false
    this.#events = run.next
    this.#stream.send('events', { ...run, ...(start > from ? { skipped: start - from } : {}) }, this.#id())
    return true
  }

  /** Sends the next stderr bytes, if any (read without blocking when they are on disk); true when it sent some. */
  async #sendStderr(): Promise<boolean> {
    const from = this.#stderr
    const total = this.#output.counters().stderrBytes
    if (total <= from) return false
    const run = await stderrRun(
      this.#output,
      total - from > STDERR_BEHIND ? total - 8192 : from,
      STDERR_PER_MESSAGE,
    )
    if (run.next <= from || this.#stderr !== from) return false
    this.#stderr = run.next
    // `from` moves past what is no longer kept, or what a jump to the newest left out.
    this.#stream.send(
      'stderr',
      { ...run, ...(run.from > from ? { skipped: run.from - from } : {}) },
      this.#id(),
    )
    return true
  }

  /** The stream id: where a reconnect resumes (`events.stderr`). */
  #id(): string {
    return `${this.#events}.${this.#stderr}`
  }
}

/** A tail start from an `EventSource`'s `Last-Event-ID`, if it carries one. */
export function resumeFrom(lastEventId: string | undefined): TailStart | undefined {
  const match = /^(\d{1,15})\.(\d{1,15})$/.exec(lastEventId ?? '')
  return match ? { events: Number(match[1]), stderr: Number(match[2]) } : undefined
}
