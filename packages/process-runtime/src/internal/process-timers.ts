import type { ProcessSpec, RuntimeSpec } from '@toolvisor/describe-v2'
import type { EndReason, StartOptions } from '../types.js'

/** What the timers of a process act on. */
export interface TimedProcess {
  stop(options: { readonly reason: EndReason }): Promise<unknown>
  /** Marks the start failed (not ready in time); the process is then stopped. */
  failReady(why: string): void
  isReady(): boolean
  finished(): boolean
}

/**
 * The timers of one process, all hanging on its lifetime signal (one abort clears them): the
 * start bound (`timeout.start` until ready), the bound of the whole run (the caller's `timeoutMs`,
 * else the operator's default for one-shot runs), the idle bound (`timeout.idle`, restarted by
 * any event in or out, ruling 17), and the caller's abort signal.
 */
export class ProcessTimers {
  readonly #lifetime: AbortSignal
  readonly #process: TimedProcess
  #idle: NodeJS.Timeout | undefined
  #idleSeconds: number | undefined

  constructor(lifetime: AbortSignal, process: TimedProcess) {
    this.#lifetime = lifetime
    this.#process = process
  }

  arm(start: StartOptions, spec: ProcessSpec, oneshotTimeoutMs: number): void {
    const { timeout } = start.tool.runtime
    if (timeout.start !== undefined && spec.ready.kind !== 'immediate') {
      this.#timer(timeout.start * 1000, () => {
        if (this.#process.isReady() || this.#process.finished()) return
        // A oneshot is ready at its exit: for it the bound is on the whole run.
        this.#process.failReady(
          spec.ready.kind === 'exit'
            ? `killed: its timeout.start of ${timeout.start} s elapsed before it finished`
            : `did not become ready within ${timeout.start} s`,
        )
        void this.#process.stop({ reason: 'not-ready' })
      })
    }
    // A one-shot run is a call: it has a bound even when the tool declares none.
    const bound = start.timeoutMs ?? (spec.mode === 'oneshot' ? oneshotTimeoutMs : undefined)
    if (bound !== undefined) this.#timer(bound, () => void this.#process.stop({ reason: 'timeout' }))
    if (typeof timeout.idle === 'number') {
      this.#idleSeconds = timeout.idle
      this.touch()
    }
    const external = start.signal
    if (external) {
      const onAbort = () => void this.#process.stop({ reason: 'cancelled' })
      // Aborted while the launch was under way: the process is stopped as soon as it runs.
      if (external.aborted) onAbort()
      external.addEventListener('abort', onAbort, { once: true })
      this.#lifetime.addEventListener('abort', () => external.removeEventListener('abort', onAbort), {
        once: true,
      })
    }
  }

  /** Restarts the idle timer, when the process has one. */
  touch(): void {
    if (this.#idleSeconds === undefined || this.#process.finished()) return
    if (this.#idle) {
      this.#idle.refresh()
      return
    }
    this.#idle = this.#timer(this.#idleSeconds * 1000, () => void this.#process.stop({ reason: 'idle' }))
  }

  #timer(ms: number, fn: () => void): NodeJS.Timeout {
    const handle = setTimeout(fn, ms)
    handle.unref()
    this.#lifetime.addEventListener('abort', () => clearTimeout(handle), { once: true })
    return handle
  }
}

/** Default grace between the cancel step and SIGKILL (ruling 12). */
const DEFAULT_STOP_SECONDS = 2

/** What the cancel sequence acts on. */
export interface Cancellable {
  readonly runtime: RuntimeSpec
  /** Writes the `{"send": EVENT}` event to stdin. */
  send(event: unknown): Promise<void>
  /** Delivers the cancel signal to the tool itself. */
  signalTool(signal: NodeJS.Signals): boolean
  /** SIGKILL to the whole group. */
  kill(): void
  /** The exit, or undefined when the process already ended. */
  exited(): Promise<unknown> | undefined
  /** Hangs its terminal up, when it runs on one (`StartOptions.terminal`). */
  hangUp?(): void
}

/** The most a hung-up terminal's program is given to end of it before the declared cancel. */
export const HANG_UP_GRACE_MS = 1_000

/**
 * The declared cancel (ruling 12), after a terminal's hang-up (SIGHUP to its session, then at most
 * {@link HANG_UP_GRACE_MS} or `timeout.stop` to end): a `{"send": EVENT}` first when declared, then the signal
 * (`SIGTERM` by default) to the tool itself, each followed by `timeout.stop` (2 s by default) for
 * the tool to exit; then SIGKILL to the group.
 */
export async function cancelSequence(process: Cancellable): Promise<void> {
  const grace = (process.runtime.timeout.stop ?? DEFAULT_STOP_SECONDS) * 1000
  // A terminal is hung up first, as closing a terminal window does: its session hears SIGHUP.
  if (process.hangUp) {
    process.hangUp()
    if (await exitsWithin(process, Math.min(grace, HANG_UP_GRACE_MS))) return
  }
  const cancel = process.runtime.cancel
  if ('send' in cancel) {
    await process.send(cancel.send).catch(() => {})
    if (await exitsWithin(process, grace)) return
  }
  process.signalTool('signal' in cancel ? cancel.signal : 'SIGTERM')
  if (await exitsWithin(process, grace)) return
  process.kill()
}

function exitsWithin(process: Cancellable, ms: number): Promise<boolean> {
  const exited = process.exited()
  if (exited === undefined) return Promise.resolve(true)
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms)
    void exited.then(() => {
      clearTimeout(timer)
      resolve(true)
    })
  })
}
