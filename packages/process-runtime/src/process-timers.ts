import type { ProcessSpec } from '@toolvisor/describe-v2'
import type { EndReason, StartOptions } from './types.js'

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
        this.#process.failReady(`did not become ready within ${timeout.start} s`)
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
