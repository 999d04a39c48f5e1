import { eventValue } from '@toolvisor/answers'
import type {
  EndReason,
  Lifecycle,
  ManagedProcess,
  ProcessExit,
  ProcessOutputView,
  ProcessTerminal,
  SequencedEvent,
  StartedWith,
  TreeUsage,
} from '@toolvisor/process-runtime'
import { statusOf } from '../answers.js'
import { ProcessesError, ProcessesErrorCodes } from '../errors.js'
import { restartDelay } from '../restart.js'
import { type ReplyTaker, ReplyWindows } from './reply-windows.js'
import { ServiceRuns } from './service-runs.js'
import type { RestartRecord, ServiceOptions } from './service-types.js'

export type { RestartRecord, ServiceOptions } from './service-types.js'

/** Ends no row: these ends were asked for (a stop, the idle bound, a shutdown), never crashes. */
const ASKED: readonly EndReason[] = ['cancelled', 'idle', 'timeout', 'runtime-disposed']
const KEEP_RESTARTS = 20 // how many restarts `status` keeps

/**
 * A service: one task of the registry (kind `service`) over one run, or one run per restart under
 * `on_exit: restart` (backoff 1, 2, 4 ... 30 s, at most 5 in a row, then `failed`). A
 * `ManagedProcess`: its events are its runs' in one sequence, its exit the final one. Every event
 * is mail (but what a send answered with), and every restart and the end.
 */
export class Service implements ManagedProcess {
  readonly id: string
  readonly tool: string
  readonly handle: string
  readonly startedAt: Date
  /** The first run's launch (a restart's is its own run's). */
  readonly launched: Promise<void>
  readonly ready: Promise<void>
  readonly exit: Promise<ProcessExit>
  /** Every run's events as one sequence, and the current run's streams (`ServiceRuns`). */
  readonly output: ProcessOutputView
  readonly #options: ServiceOptions
  readonly #runs = new ServiceRuns()
  readonly #restarts: RestartRecord[] = []
  readonly #replies = new ReplyWindows()
  #started = false
  #row = 0
  #restarted = 0
  #timer: NodeJS.Timeout | undefined
  /** Releases the record of its pending restart (`ServiceOptions.waiting`). */
  #waiting: (() => void) | undefined
  #stopping: EndReason | undefined
  #final: { readonly exit: ProcessExit; readonly lifecycle: Lifecycle } | undefined
  #resolveExit!: (exit: ProcessExit) => void

  constructor(options: ServiceOptions) {
    this.#options = options
    this.handle = options.handle
    this.output = this.#runs
    this.exit = new Promise((resolve) => {
      this.#resolveExit = resolve
    })
    const first = this.#launch()
    this.id = first.id
    this.tool = first.tool
    this.startedAt = first.startedAt
    this.launched = first.launched
    this.ready = first.ready
    first.ready.then(
      () => {
        this.#started = true
      },
      () => {},
    )
  }

  get pid(): number | undefined {
    return this.#final || this.#timer ? undefined : this.#runs.current.pid
  }

  /** Its current run is held by a keeper (decision 0113): it outlives the runtime. */
  get kept(): boolean {
    return !this.#final && !this.#timer && this.#runs.current.kept === true
  }

  /** When a runtime re-adopted its current run from its keeper after a restart. */
  get resumedAt(): Date | undefined {
    return this.#runs.current.resumedAt
  }

  get lifecycle(): Lifecycle {
    if (this.#final) return this.#final.lifecycle
    if (this.#timer) return { status: 'restarting', n: this.#row }
    return this.#runs.current.lifecycle
  }

  /**
   * What `processes status` adds for a service: the input schema `send` accepts (`null`: it takes
   * none), its `on_exit`, its last 20 restarts, oldest first, and its mail (the declared digest and
   * the events not yet in an envelope: `{"digest":{"per":"events","n":3},"pending":1}`).
   */
  facts(): Record<string, unknown> {
    return {
      input: this.#options.input === undefined ? null : this.#options.input,
      on_exit: this.#options.onExit,
      restarts: this.#restarts,
      ...(this.#options.mail ? { mail: this.#options.mail.state() } : {}),
    }
  }

  /** The current run's tree (a restart is a new launch, with a tree of its own). */
  usage(): TreeUsage | undefined {
    return this.#runs.current.usage()
  }

  /** What the current run was started with, resolved (spec §2.3). */
  get startedWith(): StartedWith | undefined {
    return this.#runs.current.startedWith
  }

  /** The current run's terminal, when the tool declared one (a restart's is its own run's). */
  get terminal(): ProcessTerminal | undefined {
    return this.#runs.current.terminal
  }

  /** Opens a send's reply window (`ReplyWindows`): an event `take` takes is its answer, never mail. */
  takeReplies(take: ReplyTaker): () => void {
    return this.#replies.open(take)
  }

  /** Mails events a reply window took but nobody will read in an answer (its caller went). */
  mailTaken(values: readonly unknown[]): void {
    for (const value of values) this.#options.mail?.event(value)
  }

  async write(event: unknown): Promise<void> {
    if (this.#final || this.#timer || this.#stopping) {
      throw new ProcessesError(
        ProcessesErrorCodes.NOT_RUNNING,
        `${this.handle} (${this.#options.tool}) is ${this.#stopping && !this.#final ? 'stopping' : statusOf(this.lifecycle)}: nothing was written`,
      )
    }
    await this.#runs.current.write(event)
  }

  closeStdin(): void {
    this.#runs.current.closeStdin()
  }

  async stop(options: { readonly force?: boolean; readonly reason?: EndReason } = {}): Promise<ProcessExit> {
    this.#stopping ??= options.reason ?? 'cancelled'
    if (this.#timer !== undefined) {
      // Between two runs: nothing runs, the service ends here.
      const last = await this.#runs.current.exit
      this.#finish({ ...last, reason: this.#stopping, at: new Date() })
    } else if (!this.#final) await this.#runs.current.stop(options)
    return this.exit
  }

  #launch(): ManagedProcess {
    const base = this.#runs.count === 0 ? 0 : this.#runs.total()
    const run = this.#options.launch((event) => this.#event(event, base))
    this.#runs.add(run)
    void run.exit.then((exit) => this.#ended(run, exit))
    return run
  }

  #event(event: SequencedEvent, base: number): void {
    const value = eventValue(event.value)
    if (!this.#replies.offer(value)) this.#options.mail?.event(value)
    this.#runs.emit(event, base)
  }

  #ended(run: ManagedProcess, exit: ProcessExit): void {
    if (this.#final || run !== this.#runs.current) return
    if (this.#stopping !== undefined || ASKED.includes(exit.reason) || !this.#started) this.#finish(exit)
    else if (this.#options.onExit === 'restart') this.#restartOrGiveUp(run, exit)
    else if (this.#options.onExit === 'fail')
      this.#finish(failed(exit, `${exitText(exit)}, and on_exit is fail`))
    else this.#finish(exit)
  }

  #restartOrGiveUp(run: ManagedProcess, exit: ProcessExit): void {
    const policy = this.#options.restart
    if (exit.at.getTime() - run.startedAt.getTime() >= policy.resetAfterMs) this.#row = 0
    if (this.#row >= policy.max) {
      const why = `${exitText(exit)} after ${policy.max} restarts in a row (on_exit restart gives up after ${policy.max})`
      this.#finish(failed(exit, why))
      return
    }
    const n = ++this.#row
    this.#restarted += 1
    const delay = restartDelay(n, policy)
    const record = {
      restart: n,
      at: new Date().toISOString(),
      after: exitText(exit),
      in_seconds: delay / 1000,
    }
    this.#restarts.push(record)
    if (this.#restarts.length > KEEP_RESTARTS) this.#restarts.shift()
    this.#timer = setTimeout(() => this.#relaunch(), delay)
    this.#timer.unref()
    this.#waiting = this.#options.waiting()
    const stderr = this.#runs.stderrLines(3).map((line) => line.slice(0, 200))
    const resumed = this.#options.resumed ? `r${this.#options.resumed}-` : ''
    this.#options.mail?.restarting(`restart-${this.handle}-${resumed}${this.#restarted}`, {
      ...this.#about(),
      ...record,
      of: policy.max,
      stderr,
    })
  }

  #relaunch(): void {
    this.#timer = undefined
    if (this.#stopping !== undefined || this.#final) return
    try {
      this.#options.annotate(this.#launch().id)
      this.#released()
    } catch (error) {
      // The runtime is gone (shutting down): the service ends, said as such.
      const why = `could not restart: ${error instanceof Error ? error.message : String(error)}`
      this.#finish({
        status: 'failed',
        code: null,
        signal: null,
        reason: 'runtime-disposed',
        why,
        at: new Date(),
      })
    }
  }

  #finish(exit: ProcessExit): void {
    if (this.#final) return
    clearTimeout(this.#timer)
    this.#timer = undefined
    this.#released()
    const lifecycle: Lifecycle =
      exit.status === 'failed'
        ? { status: 'failed', why: exit.why ?? 'failed' }
        : { status: 'exited', code: exit.code, signal: exit.signal }
    this.#final = { exit, lifecycle }
    const idle = this.#options.idleSeconds
    const note =
      exit.reason === 'idle' ? `stopped after ${idle} s without an event in or out (timeout.idle)` : undefined
    this.#options.mail?.ended(`exit-${this.handle}`, {
      ...this.#about(),
      exitCode: exit.code,
      signal: exit.signal,
      reason: exit.reason,
      restarts: this.#restarted,
      ...(note ? { note } : {}),
      ...(exit.limit ? { limit: exit.limit.field, why: exit.limit.why } : {}),
      ...(exit.usage ? { usage: exit.usage } : {}),
    })
    this.#resolveExit(exit)
  }

  #released(): void {
    this.#waiting?.()
    this.#waiting = undefined
  }

  #about(): Record<string, unknown> {
    return { process: this.handle, tool: this.#options.tool, status: statusOf(this.lifecycle) }
  }
}

/** `exited (code 1)`, `exited (signal SIGKILL)`, or why it failed. */
function exitText(exit: ProcessExit): string {
  if (exit.status === 'failed') return `failed (${exit.why})`
  return exit.code !== null ? `exited (code ${exit.code})` : `exited (signal ${exit.signal})`
}

function failed(exit: ProcessExit, why: string): ProcessExit {
  return { ...exit, status: 'failed', why }
}
