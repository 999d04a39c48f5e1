import type {
  CapturedOutput,
  EventPage,
  ManagedProcess,
  ProcessCounters,
  ProcessOutputView,
  SequencedEvent,
} from '@toolvisor/process-runtime'

/** One run of a service and where its events start in the service's sequence. */
interface Run {
  readonly base: number
  readonly process: ManagedProcess
}

/**
 * The runs of one service (one, or one per restart) read as a single sequence of events: run `k`'s
 * event `i` is the service's event `base(k) + i`. Each run keeps its own ring and spill file, so
 * reading an older run's events works as for any finished process. The service's output
 * (`ProcessOutputView`): its streams are the current run's, its listeners hear every run's events.
 */
export class ServiceRuns implements ProcessOutputView {
  readonly #runs: Run[] = []
  #listeners: Array<(event: SequencedEvent) => void> = []

  /** Appends a run; its events follow every event the runs before it produced. */
  add(process: ManagedProcess): void {
    this.#runs.push({ base: this.total(), process })
  }

  /** The newest run. */
  get current(): ManagedProcess {
    return this.#runs[this.#runs.length - 1]!.process
  }

  /** How many runs there were. */
  get count(): number {
    return this.#runs.length
  }

  /** Where the newest run's events start. */
  get base(): number {
    return this.#runs[this.#runs.length - 1]?.base ?? 0
  }

  /** Events produced by every run so far. */
  total(): number {
    const last = this.#runs[this.#runs.length - 1]
    return last === undefined ? 0 : last.base + last.process.output.counters().events
  }

  /** The counters of all runs together; `elided` counts the events no longer in a ring. */
  counters(): ProcessCounters {
    const sum = { events: 0, invalidEvents: 0, stdoutBytes: 0, stderrBytes: 0, stdinEvents: 0, elided: 0 }
    for (const { process } of this.#runs) {
      const counters = process.output.counters()
      sum.invalidEvents += counters.invalidEvents
      sum.stdoutBytes += counters.stdoutBytes
      sum.stderrBytes += counters.stderrBytes
      sum.stdinEvents += counters.stdinEvents
    }
    sum.events = this.total()
    sum.elided = this.base + this.current.output.counters().elided
    return sum
  }

  /** Up to `max` events from position `from`, from the run that holds it on into the later ones. */
  read(from: number, max: number): EventPage {
    const total = this.total()
    const events: SequencedEvent[] = []
    let next = from
    let elided = 0
    for (let i = this.#indexAt(from); i < this.#runs.length && events.length < max; i++) {
      const run = this.#runs[i]!
      const page = run.process.output.read(Math.max(0, next - run.base), max - events.length)
      for (const event of page.events) events.push(shifted(event, run.base))
      elided += page.elided
      next = Math.max(next, page.next + run.base)
      // A run that has more than this page gave: the page is full, or it cut short on purpose.
      if (next < run.base + run.process.output.counters().events) break
    }
    return { events, next, elided, total }
  }

  /** The last `n` events of the service, oldest first, across runs. */
  tail(n: number): SequencedEvent[] {
    const events: SequencedEvent[] = []
    for (let i = this.#runs.length - 1; i >= 0 && events.length < n; i--) {
      const run = this.#runs[i]!
      const taken = run.process.output.tail(n - events.length).map((event) => shifted(event, run.base))
      events.unshift(...taken)
    }
    return events
  }

  /** The last `n` stderr lines, oldest first, across runs (a crash's last words outlive its restart). */
  stderrLines(n: number): string[] {
    const lines: string[] = []
    for (let i = this.#runs.length - 1; i >= 0 && lines.length < n; i--) {
      lines.unshift(...this.#runs[i]!.process.output.stderrLines(n - lines.length))
    }
    return lines
  }

  /** What the runs hold in memory together. */
  heldBytes(): number {
    return this.#runs.reduce((sum, run) => sum + run.process.output.heldBytes(), 0)
  }

  /** The current run's stdout. */
  stdout(): CapturedOutput {
    return this.current.output.stdout()
  }

  /** The current run's stderr. */
  stderr(): CapturedOutput {
    return this.current.output.stderr()
  }

  /** Bytes of the current run's stream (as `stdout()` and `stderr()` show it). */
  bytes(stream: 'stdout' | 'stderr', offset: number, length: number): Buffer {
    return this.current.output.bytes(stream, offset, length)
  }

  onEvent(listener: (event: SequencedEvent) => void): () => void {
    this.#listeners = [...this.#listeners, listener]
    return () => {
      this.#listeners = this.#listeners.filter((other) => other !== listener)
    }
  }

  /** Tells every listener a run's event, numbered in the service's sequence from the run's `base`. */
  emit(event: SequencedEvent, base: number): void {
    const numbered = shifted(event, base)
    for (const listener of this.#listeners) {
      try {
        listener(numbered)
      } catch {
        // One listener's bug (a send collecting its reply) must not stop the others or the mail.
      }
    }
  }

  /** The index of the last run whose events start at or before `seq` (the newest one past the end). */
  #indexAt(seq: number): number {
    for (let i = this.#runs.length - 1; i > 0; i--) {
      if (this.#runs[i]!.base <= seq) return i
    }
    return 0
  }
}

function shifted(event: SequencedEvent, base: number): SequencedEvent {
  return base === 0 ? event : { seq: event.seq + base, value: event.value }
}
