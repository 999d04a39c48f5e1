import type { ChildProcess } from 'node:child_process'
import type { Readable } from 'node:stream'
import type { ProcessSpec } from '@toolvisor/describe-v2'
import { buildEnvironment } from './environment.js'
import { RuntimeError } from './errors.js'
import type { EventPage, SequencedEvent } from './event-log.js'
import type { Launch, ProcessControl } from './launchers.js'
import { capture, ProcessOutput } from './process-output.js'
import { ProcessTimers } from './process-timers.js'
import { drained, errnoText, signalGroup, workingDirectory } from './process-util.js'
import { assemble, spawnLaunch } from './spawn.js'
import { MARKER_VARIABLE, type RunState } from './state.js'
import type {
  CapturedOutput,
  EndReason,
  Lifecycle,
  ManagedProcess,
  ProcessCounters,
  ProcessExit,
  ProcessRuntime,
  StartOptions,
} from './types.js'

/** Default grace between the cancel step and SIGKILL (ruling 12). */
const DEFAULT_STOP_SECONDS = 2

/** What a process needs from its runtime. */
export interface ProcessHost {
  readonly options: ProcessRuntime['options']
  readonly state: RunState
  /** The final-exec helper, when it could be built here. */
  readonly execHelper: string | undefined
  finished(process: ToolProcess): void
  /** Kills what the process started that left its group (found by the run's marker); resolves when done. */
  sweep(process: ToolProcess): Promise<void>
}

/**
 * One spawned tool process (see `ManagedProcess`): its lifecycle, stdin, and how it stops. Its
 * output is a `ProcessOutput`, its timers `ProcessTimers`, its launch `spawn.ts`.
 */
export class ToolProcess implements ManagedProcess {
  readonly id: string
  readonly tool: string
  readonly startedAt = new Date()
  readonly ready: Promise<void>
  readonly exit: Promise<ProcessExit>

  readonly #host: ProcessHost
  readonly #start: StartOptions
  readonly #spec: ProcessSpec
  readonly #output: ProcessOutput
  /** One controller for the process: every timer and listener hangs on it. */
  readonly #lifetime = new AbortController()
  readonly #timers: ProcessTimers
  #child: ChildProcess | undefined
  #execStatus: Readable | undefined
  #control: ProcessControl | undefined
  #lifecycle: Lifecycle = { status: 'starting' }
  #stdinEvents = 0
  #ready = false
  #stopping = false
  #finished = false
  #endReason: EndReason | undefined
  #failure: string | undefined
  #resolveReady!: () => void
  #rejectReady!: (error: unknown) => void
  #resolveExit!: (exit: ProcessExit) => void

  constructor(host: ProcessHost, id: string, start: StartOptions) {
    this.#host = host
    this.#start = start
    this.id = id
    this.tool = start.tool.name
    this.#spec = start.process ?? start.tool.process
    this.ready = new Promise<void>((resolve, reject) => {
      this.#resolveReady = resolve
      this.#rejectReady = reject
    })
    this.ready.catch(() => {})
    this.exit = new Promise<ProcessExit>((resolve) => {
      this.#resolveExit = resolve
    })
    this.#timers = new ProcessTimers(this.#lifetime.signal, {
      stop: (options) => this.stop(options),
      failReady: (why) => this.#failReady(why),
      isReady: () => this.#ready,
      finished: () => this.#finished,
    })
    this.#output = new ProcessOutput({
      id,
      spillDir: host.state.spillDir,
      options: host.options,
      spec: this.#spec,
      onReady: () => this.#becomeReady(),
      onActivity: () => this.#timers.touch(),
    })
    if (start.onEvent) this.#output.subscribe(start.onEvent)
    this.#launch()
  }

  get pid(): number | undefined {
    return this.#child?.pid
  }

  get lifecycle(): Lifecycle {
    return this.#lifecycle
  }

  counters(): ProcessCounters {
    const { events, stdout, stderr } = this.#output
    return {
      events: events.total,
      invalidEvents: this.#output.invalid,
      stdoutBytes: stdout.total,
      stderrBytes: stderr.total,
      stdinEvents: this.#stdinEvents,
      elided: events.first,
    }
  }

  tail(n: number): SequencedEvent[] {
    return this.#output.tail(n)
  }

  stderrLines(n: number): string[] {
    return this.#output.stderrLines(n)
  }

  read(from: number, max: number): EventPage {
    return this.#output.read(from, max)
  }

  stdout(): CapturedOutput {
    return capture(this.#output.stdout)
  }

  stderr(): CapturedOutput {
    return capture(this.#output.stderr)
  }

  heldBytes(): number {
    return this.#output.heldBytes()
  }

  /** Moves a finished process's events and output to its spill files, freeing the memory. */
  compact(): void {
    this.#output.compact()
  }

  onEvent(listener: (event: SequencedEvent) => void): () => void {
    return this.#output.subscribe(listener)
  }

  async write(event: unknown): Promise<void> {
    const stdin = this.#child?.stdin
    if (this.#finished || !stdin || stdin.destroyed || stdin.writableEnded) {
      throw new RuntimeError(
        'RUNTIME_ERR_STDIN_CLOSED',
        `process ${this.id} (${this.tool}) does not accept input: its stdin is closed`,
      )
    }
    const input = this.#spec.input
    const problem = input?.validate?.(event)
    if (problem !== undefined) {
      throw new RuntimeError(
        'RUNTIME_ERR_INVALID_INPUT',
        `event does not match ${this.tool}'s input.event: ${problem}`,
      )
    }
    const line = input?.framing === 'lines' && typeof event === 'string' ? event : JSON.stringify(event)
    await new Promise<void>((resolve, reject) => {
      stdin.write(`${line}\n`, (error) => (error ? reject(error) : resolve()))
    }).catch((error: NodeJS.ErrnoException) => {
      throw new RuntimeError(
        'RUNTIME_ERR_STDIN_CLOSED',
        `process ${this.id} (${this.tool}) stopped reading its stdin: ${error.code ?? error.message}`,
      )
    })
    this.#stdinEvents++
    this.#timers.touch()
  }

  closeStdin(): void {
    this.#child?.stdin?.end()
  }

  /**
   * The declared cancel (a signal to the tool, or an event on its stdin first), SIGKILL to the
   * group after `timeout.stop`; `force`: SIGKILL at once. Resolves once the process exited and
   * what it started outside its group (by the run's marker) is gone too.
   */
  async stop(options: { readonly force?: boolean; readonly reason?: EndReason } = {}): Promise<ProcessExit> {
    if (!this.#finished) {
      this.#endReason ??= options.reason ?? 'cancelled'
      this.#setLifecycle({ status: 'stopping' })
      if (options.force) signalGroup(this.pid, 'SIGKILL')
      else if (!this.#stopping) {
        this.#stopping = true
        await this.#cancel()
      }
    }
    const exit = await this.exit
    await this.#host.sweep(this)
    return exit
  }

  async #cancel(): Promise<void> {
    const grace = (this.#start.tool.runtime.timeout.stop ?? DEFAULT_STOP_SECONDS) * 1000
    const cancel = this.#start.tool.runtime.cancel
    if ('send' in cancel) {
      await this.write(cancel.send).catch(() => {})
      if (await this.#exitsWithin(grace)) return
    }
    const signal = 'signal' in cancel ? cancel.signal : 'SIGTERM'
    if (!this.#control?.signal(signal)) signalGroup(this.pid, signal)
    if (await this.#exitsWithin(grace)) return
    signalGroup(this.pid, 'SIGKILL')
  }

  #launch(): void {
    const { tool } = this.#start
    if (this.#start.signal?.aborted) return this.#failStart('cancelled', 'cancelled before it started')
    let launch: Launch | undefined
    let status: number | undefined
    let spawned: ReturnType<typeof spawnLaunch>
    try {
      const env = buildEnvironment(tool, this.#start.env, this.#start.context, [
        MARKER_VARIABLE,
        this.#host.state.marker(this.id),
      ])
      const base: Launch = {
        file: tool.path,
        args: [...this.#start.argv],
        env,
        cwd: workingDirectory(tool),
        extraFds: [],
      }
      ;({ launch, status } = assemble(tool, base, this.#host.execHelper))
      spawned = spawnLaunch(launch)
    } catch (error) {
      const why = RuntimeError.is(error)
        ? error.message
        : `cannot start ${tool.path}: ${(error as Error).message}`
      return this.#failStart('spawn-failed', why)
    }
    const { child } = spawned
    this.#child = child
    let spawnError: Error | undefined
    child.on('error', (error) => {
      spawnError = error
    })
    if (child.pid === undefined) {
      // spawn failed (ENOENT, EACCES): Node reports it on 'error' and closes the pipes.
      child.once('close', () =>
        this.#failStart(
          'spawn-failed',
          `cannot start ${launch.file}: ${spawnError?.message ?? 'spawn failed'}`,
        ),
      )
      return
    }
    this.#host.state.track(this.id, child.pid, this.tool)
    this.#watchExec(status === undefined ? undefined : (spawned.pipes[status] as Readable | undefined))
    if (tool.sandbox?.mechanism.control) {
      this.#control = tool.sandbox.mechanism.control({
        pid: child.pid,
        extraFds: spawned.pipes as (Readable | undefined)[],
      })
    }
    this.#wireStdin(child)
    child.stdout?.on('data', (chunk: Buffer) => this.#output.pushStdout(chunk))
    child.stderr?.on('data', (chunk: Buffer) => this.#output.pushStderr(chunk))
    child.once('exit', (code, signal) => void this.#onExit(child, code, signal))
    this.#timers.arm(this.#start, this.#spec, this.#host.options.oneshotTimeoutMs)
    if (this.#spec.ready.kind === 'immediate') this.#becomeReady()
    else if (this.#spec.ready.kind === 'exit') this.#setLifecycle({ status: 'running' })
  }

  #failStart(reason: EndReason, why: string): void {
    this.#endReason = reason
    this.#failure ??= why
    this.#finish(null, null)
  }

  /** The final exec's status pipe: text on it means the tool itself could not be started. */
  #watchExec(stream: Readable | undefined): void {
    if (stream === undefined) return
    this.#execStatus = stream
    let text = ''
    stream.setEncoding('utf8')
    stream.on('data', (chunk: string) => {
      if (text.length < 1024) text += chunk
    })
    stream.once('end', () => {
      if (text.length === 0) return
      this.#endReason = 'spawn-failed'
      this.#failure ??= `cannot start ${this.#start.tool.path}: ${errnoText(text)}`
    })
  }

  /**
   * Writes the stdin bytes, then closes stdin, unless the caller keeps it open or the tool
   * declares a `{"send": EVENT}` cancel: that event must be deliverable, so stdin stays open.
   */
  #wireStdin(child: ChildProcess): void {
    const stdin = child.stdin
    if (!stdin) return
    // A tool that exits without reading its stdin must not crash us with EPIPE.
    stdin.on('error', () => {})
    const input = this.#start.stdin
    if (input === 'open') return
    const bytes = input && input.length > 0 ? Buffer.from(input) : undefined
    if ('send' in this.#start.tool.runtime.cancel) {
      if (bytes) stdin.write(bytes)
      return
    }
    if (bytes) stdin.end(bytes)
    else stdin.end()
  }

  #becomeReady(): void {
    if (this.#ready) return
    this.#ready = true
    if (!this.#stopping && !this.#finished) this.#setLifecycle({ status: 'running' })
    this.#resolveReady()
  }

  #failReady(why: string): void {
    if (this.#ready) return
    this.#ready = true
    this.#failure ??= why
    const out = this.#output.stdout.tail(2048).toString('utf8')
    const err = this.#output.stderr.tail(2048).toString('utf8')
    this.#rejectReady(
      new RuntimeError(
        'RUNTIME_ERR_NOT_READY',
        `${this.tool} ${why}\n--- stdout (last bytes) ---\n${out}\n--- stderr (last bytes) ---\n${err}`,
      ),
    )
  }

  #exitsWithin(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      if (this.#finished) return resolve(true)
      const timer = setTimeout(() => resolve(false), ms)
      void this.exit.then(() => {
        clearTimeout(timer)
        resolve(true)
      })
    })
  }

  async #onExit(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): Promise<void> {
    // What the tool left in its group dies with it, and what left the group too (the sweep, which
    // also lets pipes such a descendant held open close): nothing a tool starts outlives it.
    signalGroup(child.pid, 'SIGKILL')
    void this.#host.sweep(this)
    await Promise.all([drained(child.stdout), drained(child.stderr), drained(this.#execStatus)])
    this.#output.end()
    if (!this.#ready) {
      if (this.#spec.ready.kind === 'exit') this.#becomeReady()
      else
        this.#failReady(`exited (${code === null ? `signal ${signal}` : `code ${code}`}) before it was ready`)
    }
    this.#finish(code, signal)
  }

  #finish(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.#finished) return
    this.#finished = true
    this.#lifetime.abort()
    this.#child?.stdin?.destroy()
    this.#output.close()
    if (this.#child?.pid !== undefined) this.#host.state.untrack(this.id)
    const reason: EndReason = this.#endReason ?? (this.#failure ? 'spawn-failed' : 'exit')
    const failed = this.#failure !== undefined
    this.#setLifecycle(
      failed ? { status: 'failed', why: this.#failure! } : { status: 'exited', code, signal },
    )
    if (!this.#ready) this.#failReady(this.#failure ?? 'ended before it was ready')
    this.#resolveExit({
      status: failed ? 'failed' : 'exited',
      code,
      signal,
      reason,
      at: new Date(),
      ...(failed ? { why: this.#failure! } : {}),
    })
    this.#host.finished(this)
  }

  #setLifecycle(lifecycle: Lifecycle): void {
    const current = this.#lifecycle.status
    if (current === 'exited' || current === 'failed') return
    this.#lifecycle = lifecycle
  }
}
