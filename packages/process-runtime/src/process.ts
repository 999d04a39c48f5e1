import type { ChildProcess } from 'node:child_process'
import { constants } from 'node:os'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import type { ProcessSpec } from '@toolvisor/describe-v2'
import { createDecoder, type Decoder } from './decode.js'
import { buildEnvironment } from './environment.js'
import { RuntimeError } from './errors.js'
import { EventLog, type EventPage, type SequencedEvent } from './event-log.js'
import { LineFramer } from './framing.js'
import type { Launch, ProcessControl } from './launchers.js'
import { SpillingOutput } from './output.js'
import { isInside } from './policy.js'
import { Ring } from './ring.js'
import { assemble, type Spawned, spawnLaunch } from './spawn.js'
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

const errnoConstants = constants.errno as Record<string, number>

/** Default grace between the cancel step and SIGKILL (ruling 12). */
const DEFAULT_STOP_SECONDS = 2
/** How long to wait for the pipes to close after the process and its group are gone. */
const DRAIN_MS = 500
/** Longest stderr line kept whole in the stderr ring. */
const MAX_STDERR_LINE = 16 * 1024

type Options = ProcessRuntime['options']

/** What a process needs from its runtime. */
export interface ProcessHost {
  readonly options: Options
  readonly state: RunState
  /** The final-exec helper, when it could be built here. */
  readonly execHelper: string | undefined
  finished(process: ToolProcess): void
}

/** One spawned tool process (see `ManagedProcess`). */
export class ToolProcess implements ManagedProcess {
  readonly id: string
  readonly tool: string
  readonly startedAt = new Date()
  readonly ready: Promise<void>
  readonly exit: Promise<ProcessExit>

  readonly #host: ProcessHost
  readonly #start: StartOptions
  readonly #spec: ProcessSpec
  readonly #stdout: SpillingOutput
  readonly #stderr: SpillingOutput
  readonly #events: EventLog
  readonly #stderrLines: Ring<string>
  readonly #decoder: Decoder
  readonly #stderrFramer: LineFramer
  /** An array, not a Set: iterating a Set allocates an iterator per event on the hot path. */
  #listeners: Array<(event: SequencedEvent) => void> = []
  /** One controller for the process: every timer and listener hangs on it. */
  readonly #lifetime = new AbortController()
  #child: ChildProcess | undefined
  #execStatus: Readable | undefined
  #control: ProcessControl | undefined
  #lifecycle: Lifecycle = { status: 'starting' }
  #invalid = 0
  #stdinEvents = 0
  #isReady = false
  #stopping = false
  #finished = false
  #endReason: EndReason | undefined
  #failure: string | undefined
  #idleTimer: NodeJS.Timeout | undefined
  #resolveReady!: () => void
  #rejectReady!: (error: unknown) => void
  #resolveExit!: (exit: ProcessExit) => void

  constructor(host: ProcessHost, id: string, start: StartOptions) {
    this.#host = host
    this.#start = start
    this.id = id
    this.tool = start.tool.name
    this.#spec = start.process ?? start.tool.process
    const { options } = host
    this.ready = new Promise<void>((resolve, reject) => {
      this.#resolveReady = resolve
      this.#rejectReady = reject
    })
    this.ready.catch(() => {})
    this.exit = new Promise<ProcessExit>((resolve) => {
      this.#resolveExit = resolve
    })
    const spill = (stream: string) => join(host.state.spillDir, `${id}.${stream}`)
    this.#stdout = new SpillingOutput({
      limit: options.resultBytes,
      tailBytes: options.tailBytes,
      spillPath: spill('stdout'),
    })
    this.#stderr = new SpillingOutput({
      limit: options.resultBytes,
      tailBytes: options.tailBytes,
      spillPath: spill('stderr'),
    })
    const decode = { output: this.#spec.output, maxLine: options.maxLineBytes, ready: this.#spec.ready }
    this.#events = new EventLog({
      capacity: options.ringEvents,
      maxBytes: options.ringBytes,
      decode,
      stdout: this.#stdout,
    })
    this.#decoder = createDecoder(decode, {
      event: (value, offset, invalid) => this.#event(value, offset, invalid),
      ready: (offset) => {
        this.#events.markReady(offset)
        this.#becomeReady()
      },
    })
    this.#stderrLines = new Ring(options.ringStderrLines)
    this.#stderrFramer = new LineFramer(
      {
        line: (buffer, start, end) => this.#stderrLines.push(buffer.toString('utf8', start, end)),
        overlong: (preview, _offset, length) =>
          this.#stderrLines.push(`${preview.toString('utf8')}… (line of ${length} bytes, cut)`),
      },
      MAX_STDERR_LINE,
    )
    if (start.onEvent) this.#listeners.push(start.onEvent)
    this.#launch()
  }

  get pid(): number | undefined {
    return this.#child?.pid
  }

  get lifecycle(): Lifecycle {
    return this.#lifecycle
  }

  counters(): ProcessCounters {
    return {
      events: this.#events.total,
      invalidEvents: this.#invalid,
      stdoutBytes: this.#stdout.total,
      stderrBytes: this.#stderr.total,
      stdinEvents: this.#stdinEvents,
      elided: this.#events.first,
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

  /** About how many bytes this process holds in memory (ring, heads, tails). */
  heldBytes(): number {
    return this.#events.heldBytes + this.#stdout.heldBytes + this.#stderr.heldBytes
  }

  /** Moves a finished process's events and output to its spill files, freeing the memory. */
  compact(): void {
    if (this.#stdout.compact()) this.#events.compact()
    this.#stderr.compact()
  }

  onEvent(listener: (event: SequencedEvent) => void): () => void {
    this.#listeners = [...this.#listeners, listener]
    return () => {
      this.#listeners = this.#listeners.filter((other) => other !== listener)
    }
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
    this.#touch()
  }

  closeStdin(): void {
    this.#child?.stdin?.end()
  }

  async stop(options: { readonly force?: boolean; readonly reason?: EndReason } = {}): Promise<ProcessExit> {
    if (this.#finished) return this.exit
    this.#endReason ??= options.reason ?? 'cancelled'
    if (options.force) {
      this.#setLifecycle({ status: 'stopping' })
      this.#killGroup('SIGKILL')
      return this.exit
    }
    if (this.#stopping) return this.exit
    this.#stopping = true
    this.#setLifecycle({ status: 'stopping' })
    const grace = (this.#start.tool.runtime.timeout.stop ?? DEFAULT_STOP_SECONDS) * 1000
    const cancel = this.#start.tool.runtime.cancel
    if ('send' in cancel) {
      await this.write(cancel.send).catch(() => {})
      if (await this.#exitsWithin(grace)) return this.exit
    }
    this.#signalTool('signal' in cancel ? cancel.signal : 'SIGTERM')
    if (await this.#exitsWithin(grace)) return this.exit
    this.#killGroup('SIGKILL')
    return this.exit
  }

  #launch(): void {
    const { tool } = this.#start
    if (this.#start.signal?.aborted) {
      this.#endReason = 'cancelled'
      this.#fail('cancelled before it started')
      this.#finish(null, null)
      return
    }
    let launch: Launch = {
      file: tool.path,
      args: [...this.#start.argv],
      env: buildEnvironment(tool, this.#start.env, this.#start.context, [
        MARKER_VARIABLE,
        this.#host.state.marker(this.id),
      ]),
      cwd: workingDirectory(tool),
      extraFds: [],
    }
    let spawned: Spawned
    let status: number | undefined
    try {
      ;({ launch, status } = assemble(tool, launch, this.#host.execHelper))
      spawned = spawnLaunch(launch)
    } catch (error) {
      this.#endReason = 'spawn-failed'
      this.#fail(
        RuntimeError.is(error) ? error.message : `cannot start ${launch.file}: ${(error as Error).message}`,
      )
      this.#finish(null, null)
      return
    }
    const { child } = spawned
    this.#child = child
    let spawnError: Error | undefined
    child.on('error', (error) => {
      spawnError = error
    })
    if (child.pid === undefined) {
      // spawn failed (ENOENT, EACCES): Node reports it on 'error' and closes the pipes.
      child.once('close', () => {
        this.#endReason = 'spawn-failed'
        this.#fail(`cannot start ${launch.file}: ${spawnError?.message ?? 'spawn failed'}`)
        this.#finish(null, null)
      })
      return
    }
    this.#host.state.track(this.id, child.pid, this.tool)
    this.#watchExec(status === undefined ? undefined : (spawned.pipes[status] as Readable | undefined))
    if (tool.sandbox?.mechanism.control) {
      this.#control = tool.sandbox.mechanism.control({
        pid: child.pid,
        extraFds: spawned.pipes as readonly (Readable | undefined)[],
      })
    }
    this.#wireStdin(child)
    child.stdout?.on('data', (chunk: Buffer) => {
      this.#stdout.append(chunk)
      this.#decoder.push(chunk)
    })
    child.stderr?.on('data', (chunk: Buffer) => {
      this.#stderr.append(chunk)
      this.#stderrFramer.push(chunk)
    })
    child.once('exit', (code, signal) => void this.#onExit(child, code, signal))
    this.#armTimers()
    const kind = this.#spec.ready.kind
    if (kind === 'immediate') this.#becomeReady()
    else if (kind === 'exit') this.#setLifecycle({ status: 'running' })
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
      this.#fail(`cannot start ${this.#start.tool.path}: ${errnoText(text)}`)
    })
  }

  #wireStdin(child: ChildProcess): void {
    const stdin = child.stdin
    if (!stdin) return
    // A tool that exits without reading its stdin must not crash us with EPIPE.
    stdin.on('error', () => {})
    const input = this.#start.stdin
    if (input === 'open') return
    if (input && input.length > 0) stdin.end(Buffer.from(input))
    else stdin.end()
  }

  #armTimers(): void {
    const signal = this.#lifetime.signal
    const timer = (ms: number, fn: () => void) => {
      const handle = setTimeout(fn, ms)
      handle.unref()
      signal.addEventListener('abort', () => clearTimeout(handle), { once: true })
    }
    const { timeout } = this.#start.tool.runtime
    if (timeout.start !== undefined && this.#spec.ready.kind !== 'immediate') {
      timer(timeout.start * 1000, () => {
        if (this.#isReady || this.#finished) return
        this.#failReady(`did not become ready within ${timeout.start} s`)
        void this.stop({ reason: 'not-ready' })
      })
    }
    if (this.#start.timeoutMs !== undefined) {
      const ms = this.#start.timeoutMs
      timer(ms, () => void this.stop({ reason: 'timeout' }))
    }
    if (typeof timeout.idle === 'number') this.#touch()
    const external = this.#start.signal
    if (external) {
      const onAbort = () => void this.stop({ reason: 'cancelled' })
      external.addEventListener('abort', onAbort, { once: true })
      signal.addEventListener('abort', () => external.removeEventListener('abort', onAbort), { once: true })
    }
  }

  /** Restarts the idle timer: any event in or out counts (ruling 17). */
  #touch(): void {
    const idle = this.#start.tool.runtime.timeout.idle
    if (typeof idle !== 'number' || this.#finished) return
    if (this.#idleTimer) {
      this.#idleTimer.refresh()
      return
    }
    this.#idleTimer = setTimeout(() => void this.stop({ reason: 'idle' }), idle * 1000)
    this.#idleTimer.unref()
    this.#lifetime.signal.addEventListener('abort', () => clearTimeout(this.#idleTimer), { once: true })
  }

  #event(value: unknown, offset: number, invalid: boolean): void {
    const seq = this.#events.append(value, offset)
    if (invalid) this.#invalid++
    if (this.#idleTimer) this.#idleTimer.refresh()
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

  #becomeReady(): void {
    if (this.#isReady) return
    this.#isReady = true
    if (!this.#stopping && !this.#finished) this.#setLifecycle({ status: 'running' })
    this.#resolveReady()
  }

  #failReady(why: string): void {
    if (this.#isReady) return
    this.#isReady = true
    this.#fail(why)
    const out = this.#stdout.tail(2048).toString('utf8')
    const err = this.#stderr.tail(2048).toString('utf8')
    this.#rejectReady(
      new RuntimeError(
        'RUNTIME_ERR_NOT_READY',
        `${this.tool} ${why}\n--- stdout (last bytes) ---\n${out}\n--- stderr (last bytes) ---\n${err}`,
      ),
    )
  }

  #fail(why: string): void {
    this.#failure ??= why
  }

  #signalTool(signal: NodeJS.Signals): void {
    if (this.#control?.signal(signal)) return
    this.#killGroup(signal)
  }

  #killGroup(signal: NodeJS.Signals): void {
    const pid = this.#child?.pid
    if (pid === undefined) return
    try {
      process.kill(-pid, signal)
    } catch {
      // the group is already gone
    }
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
    // What the tool left in its group dies with it: nothing a tool starts outlives it by accident.
    this.#killGroup('SIGKILL')
    await Promise.all([drained(child.stdout), drained(child.stderr), drained(this.#execStatus ?? null)])
    this.#decoder.end()
    this.#stderrFramer.end()
    if (!this.#isReady) {
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
    this.#stdout.close()
    this.#stderr.close()
    if (this.#child?.pid !== undefined) this.#host.state.untrack(this.id)
    const reason: EndReason = this.#endReason ?? (this.#failure ? 'spawn-failed' : 'exit')
    const failed = this.#failure !== undefined
    this.#setLifecycle(
      failed ? { status: 'failed', why: this.#failure! } : { status: 'exited', code, signal },
    )
    if (!this.#isReady) this.#failReady(this.#failure ?? 'ended before it was ready')
    const exit: ProcessExit = {
      status: failed ? 'failed' : 'exited',
      code,
      signal,
      reason,
      at: new Date(),
      ...(failed ? { why: this.#failure! } : {}),
    }
    this.#resolveExit(exit)
    this.#host.finished(this)
  }

  #setLifecycle(lifecycle: Lifecycle): void {
    const current = this.#lifecycle.status
    if (current === 'exited' || current === 'failed') return
    this.#lifecycle = lifecycle
  }
}

/**
 * Where a tool starts: its rundir; else, unsandboxed, toolvisor's own working directory; else
 * that directory when it lies inside one of the tool's grants (which its user can reach: checked
 * at load), and the tool's own directory otherwise (toolvisor's may be out of the sandbox user's
 * reach, or not there at all inside the sandbox).
 */
function workingDirectory(tool: StartOptions['tool']): string {
  if (tool.rundir !== undefined) return tool.rundir
  const here = process.cwd()
  const policy = tool.sandbox?.policy
  if (policy === undefined) return here
  const grants = [policy.toolDir, ...policy.read, ...policy.write]
  return grants.some((grant) => isInside(here, grant)) ? here : policy.toolDir
}

/** `errno=2 No such file or directory` (from toolvisor-exec) as `ENOENT: No such file or directory`. */
function errnoText(text: string): string {
  const match = /^errno=(\d+) (.*)$/s.exec(text.trim())
  if (match === null) return text.trim()
  const number = Number(match[1])
  const name = Object.entries(errnoConstants).find(([, value]) => value === number)?.[0]
  return name === undefined ? match[2]! : `${name}: ${match[2]}`
}

function capture(output: SpillingOutput): CapturedOutput {
  const spillPath = output.spillPath
  return {
    head: output.head(),
    tail: output.tail(),
    totalBytes: output.total,
    truncated: output.truncated,
    ...(spillPath ? { spillPath } : {}),
  }
}

/** Resolves when a stream ended, or after a bound (a descendant outside the group may hold it open). */
function drained(stream: Readable | null): Promise<void> {
  if (!stream || stream.readableEnded || stream.destroyed) return Promise.resolve()
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      stream.destroy()
      resolve()
    }, DRAIN_MS)
    stream.once('close', () => {
      clearTimeout(timer)
      resolve()
    })
  })
}
