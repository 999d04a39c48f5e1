import type { Readable } from 'node:stream'
import type { TreeUsage } from '@toolvisor/containment'
import type { ProcessSpec } from '@toolvisor/describe-v2'
import type { ProcessControl } from '@toolvisor/launchers'
import { ProcessOutput } from '@toolvisor/process-output'
import type { Child, KeptChildHandle } from '../spawner.js'
import type {
  EndReason,
  Lifecycle,
  ManagedProcess,
  ProcessExit,
  ProcessTerminal,
  StartOptions,
} from '../types.js'
import { type Adopted, adoptedLaunch } from './process-kept.js'
import {
  type Launched,
  launchFailure,
  launchProcess,
  type ProcessHost,
  watchExec,
  wireStdin,
  writeEvent,
} from './process-launch.js'
import { ProcessNetwork } from './process-network.js'
import { pipeOutput, processTerminal, recordingOf } from './process-terminal.js'
import { cancelSequence, ProcessTimers } from './process-timers.js'
import { cleanUp, exitOf, type ProcessTree } from './process-tree.js'
import { drained, signalGroup, spawnedPid } from './process-util.js'
import type { Recording } from './recording.js'
import { type StartedWith, startedWith } from './started-with.js'

/** A tool process (`ManagedProcess`): lifecycle, stdin, stop; its output a `ProcessOutput`, timers `ProcessTimers`. */
export class ToolProcess implements ManagedProcess {
  readonly id: string
  readonly tool: string
  readonly startedAt: Date
  /** When this runtime re-adopted it from a keeper (decision 0113): it was started by an earlier one. */
  readonly resumedAt: Date | undefined
  readonly launched: Promise<void>
  readonly ready: Promise<void>
  readonly exit: Promise<ProcessExit>
  /** What it wrote (`ProcessOutputView`); the retention budget compacts it once it finished. */
  readonly output: ProcessOutput

  readonly #host: ProcessHost
  readonly #start: StartOptions
  readonly #spec: ProcessSpec
  /** One controller for the process: every timer and listener hangs on it. */
  readonly #lifetime = new AbortController()
  readonly #timers: ProcessTimers
  #child: Child | undefined
  #kept = false
  #execStatus: Readable | undefined
  #control: ProcessControl | undefined
  #tree: ProcessTree | undefined
  #network: ProcessNetwork | undefined
  #lifecycle: Lifecycle = { status: 'starting' }
  #stdinEvents = 0
  #ready = false
  #stopping = false
  #finished = false
  #endReason: EndReason | undefined
  #failure: string | undefined
  /** Why the runtime killed it for a reason of its own (its fork server died). */
  #killedBecause: string | undefined
  #resolveReady!: () => void
  #rejectReady!: (error: unknown) => void
  #resolveExit!: (exit: ProcessExit) => void
  readonly terminal: ProcessTerminal | undefined
  /** A terminal's session, kept as asciicast in the spill directory (`ID.cast`). */
  readonly #recording: Recording | undefined

  constructor(host: ProcessHost, id: string, start: StartOptions, adopted?: Adopted) {
    this.#host = host
    this.#start = start
    this.id = id
    this.startedAt = adopted ? new Date(adopted.record.startedAt) : new Date()
    this.resumedAt = adopted ? new Date() : undefined
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
    const allowance = host.spillLedger(id)
    this.output = new ProcessOutput({
      id,
      spillDir: host.state.spill,
      allowance,
      options: host.options,
      ...(start.resultBytes !== undefined ? { resultBytes: start.resultBytes } : {}),
      spec: this.#spec,
      spillStages: host.spawner.spillStages,
      onReady: () => this.#becomeReady(),
      onActivity: () => this.#timers.touch(),
      stdinEvents: () => this.#stdinEvents,
    })
    if (start.onEvent) this.output.onEvent(start.onEvent)
    if (start.terminal) {
      this.#recording = recordingOf(host.state.spill, id, start, { cap: host.options.spillBytes, allowance })
      this.terminal = processTerminal(start.terminal, this.#recording, {
        id,
        tool: this.tool,
        launched: () => this.launched,
        child: () => this.#child,
        finished: () => this.#finished,
        touch: () => this.#timers.touch(),
        closeStdin: () => this.closeStdin(),
      })
    }
    const failed = (error: unknown) => this.#failStart('spawn-failed', launchFailure(start, error))
    this.launched = this.#launch(adopted).catch(failed)
  }

  get pid(): number | undefined {
    return this.#child?.pid
  }

  get startedWith(): StartedWith {
    return startedWith(this.#start.tool, this.#start.cwd, this.#start.tool.limits ?? this.#host.defaultLimits)
  }

  get lifecycle(): Lifecycle {
    return this.#lifecycle
  }

  usage(): TreeUsage {
    const network = this.#network?.usage()
    return { ...this.#tree?.usage(), spillBytes: this.output.spillBytes(), ...(network ? { network } : {}) }
  }

  async write(event: unknown): Promise<void> {
    await this.launched
    const stdin = this.#finished ? undefined : this.#child?.stdin
    await writeEvent(stdin, this.#spec.input, event, this)
    this.#stdinEvents++
    this.#timers.touch()
  }

  /** Held by a keeper (decision 0113): it runs on after this runtime. */
  get kept(): boolean {
    return this.#kept
  }

  /** A kept process let go (`dispose({ keep: true })`): its timers stop, its placeholders stay; its keeper tells its exit. */
  abandon(): void {
    if (!this.#finished) this.#lifetime.abort()
  }

  closeStdin(): void {
    void this.launched.then(() => this.#child?.stdin?.end())
  }

  /**
   * The declared cancel (a signal, or an event on stdin), SIGKILL to the group after `timeout.stop`
   * (`force`: at once, once a launch under way settled); resolves once it and what it started are gone.
   */
  async stop(options: { readonly force?: boolean; readonly reason?: EndReason } = {}): Promise<ProcessExit> {
    await this.launched
    if (!this.#finished) {
      this.#endReason ??= options.reason ?? 'cancelled'
      this.#setLifecycle({ status: 'stopping' })
      if (options.force) signalGroup(this.pid, 'SIGKILL')
      else if (!this.#stopping) {
        this.#stopping = true
        await cancelSequence({
          runtime: this.#start.tool.runtime,
          send: (event) => this.write(event),
          signalTool: (signal) => this.#control?.signal(signal) || signalGroup(this.pid, signal),
          kill: () => signalGroup(this.pid, 'SIGKILL'),
          exited: () => (this.#finished ? undefined : this.exit),
          ...(this.terminal ? { hangUp: () => this.#child?.stdin?.end() } : {}),
        })
      }
    }
    const exit = await this.exit
    await (this.#tree ? this.#tree.end() : this.#host.sweep(this))
    return exit
  }

  /** Launches it, or takes a kept process of an earlier runtime over from its keeper (`Runtime.adopt`). */
  async #launch(adopted?: Adopted): Promise<void> {
    if (!adopted && this.#start.signal?.aborted) {
      this.#failStart('cancelled', 'cancelled before it started')
      return
    }
    this.#host.state.launching(this.id, this.tool)
    // A launch that throws fails the start (the constructor's catch of `launched`).
    this.#wire(adopted ? await adoptedLaunch(adopted) : await launchProcess(this.id, this.#start, this.#host))
  }

  #wire(launched: Launched): void {
    const { child } = launched
    // At its end its gate closes and its placeholders go (a kept one abandoned keeps them: decision 0113).
    const end = () => [launched.gate?.close(), this.#finished && launched.release?.()]
    this.#lifetime.signal.addEventListener('abort', end, { once: true })
    this.#child = child
    const failed = (why: string) => this.#failStart('spawn-failed', why)
    const pid = spawnedPid(child, this.#start.tool.path, failed)
    if (pid === undefined) return
    this.#host.state.track(this.id, pid, this.tool)
    if (launched.kept) this.#kept = this.#host.keeps(this, child as KeptChildHandle, launched, this.#start)
    this.#control = launched.control
    this.#tree = launched.tree
    if (launched.gate)
      this.#network = new ProcessNetwork(launched.gate, (text) => this.output.pushStderr(Buffer.from(text)))
    this.#execStatus = launched.status
    if (launched.status) {
      watchExec(launched.status, this.#start.tool.path, (why) => {
        this.#endReason = 'spawn-failed'
        this.#failure ??= why
      })
    }
    wireStdin(child, this.#start)
    pipeOutput(child, this.output, this.#recording)
    child.once('exit', (code, signal, why) => void this.#onExit(child, code, signal, why))
    this.#timers.arm(this.#start, this.#spec, this.#host.options.oneshotTimeoutMs)
    if (this.#spec.ready.kind === 'immediate') this.#becomeReady()
    else if (this.#spec.ready.kind === 'exit') this.#setLifecycle({ status: 'running' })
  }

  #failStart(reason: EndReason, why: string): void {
    this.#endReason = reason
    this.#failure ??= why
    this.#finish(null, null)
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
    this.#rejectReady(this.output.notReady(this.tool, why))
  }

  async #onExit(child: Child, code: number | null, signal: NodeJS.Signals | null, why?: string) {
    this.#killedBecause = why
    const limit = this.#tree?.hit(code, signal)
    // What the tool left in its group dies with it, and what left the group too.
    signalGroup(child.pid, 'SIGKILL')
    const pipes = [drained(child.stdout), drained(child.stderr), drained(this.#execStatus)]
    await cleanUp(this.#tree, (urgency) => this.#host.sweep(this, urgency), pipes)
    await this.#network?.close()
    if (limit?.field === 'pids') this.output.pushStderr(Buffer.from(`\n[toolvisor: ${limit.why}]\n`))
    this.output.end()
    await this.output.drained() // the exit is told once the spill files hold everything
    await this.#recording?.drained() // and the recording
    const ended = `exited (${code === null ? `signal ${signal}` : `code ${code}`}) before it was ready`
    if (!this.#ready && this.#spec.ready.kind === 'exit') this.#becomeReady()
    else if (!this.#ready) this.#failReady(ended)
    this.#finish(code, signal)
  }

  #finish(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.#finished) return
    this.#finished = true
    this.#lifetime.abort()
    this.#child?.stdin?.destroy()
    this.output.close()
    this.#recording?.close()
    this.#host.state.untrack(this.id)
    const exit = exitOf(code, signal, {
      reason: this.#endReason,
      failure: this.#failure,
      why: this.#killedBecause,
      limit: this.#tree?.limit,
      usage: this.usage(),
    })
    this.#failure = exit.status === 'failed' ? exit.why : undefined
    this.#setLifecycle(
      exit.status === 'failed' ? { status: 'failed', why: exit.why! } : { status: 'exited', code, signal },
    )
    if (!this.#ready) this.#failReady(this.#failure ?? 'ended before it was ready')
    this.#resolveExit(exit)
    this.#host.finished(this)
  }

  #setLifecycle(lifecycle: Lifecycle): void {
    const current = this.#lifecycle.status
    if (current === 'exited' || current === 'failed') return
    this.#lifecycle = lifecycle
  }
}
