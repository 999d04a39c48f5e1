/** The bounds a `CallGate` keeps. */
export interface CallGateLimits {
  readonly maxConcurrentCalls: number
  readonly maxQueuedCalls: number
}

/** Why a call did not get in. */
export type Refusal = 'refused' | 'aborted'

/**
 * The calls of one session: at most `maxConcurrentCalls` run, at most `maxQueuedCalls` more wait
 * (first come, first run), and any more are refused at once. A waiting call whose signal aborts
 * leaves the queue without running.
 */
export class CallGate {
  private running = 0
  private readonly waiting: Array<() => void> = []

  constructor(private readonly limits: CallGateLimits) {}

  /** What is in use, for a refusal's text. */
  get load(): { readonly running: number; readonly waiting: number } {
    return { running: this.running, waiting: this.waiting.length }
  }

  /** Resolves with the release of the place once the call may run, or with why it may not. */
  enter(signal: AbortSignal): Promise<(() => void) | Refusal> {
    if (signal.aborted) return Promise.resolve('aborted')
    if (this.running < this.limits.maxConcurrentCalls) {
      this.running++
      return Promise.resolve(this.releaser())
    }
    if (this.waiting.length >= this.limits.maxQueuedCalls) return Promise.resolve('refused')
    return new Promise((resolve) => {
      const start = (): void => {
        signal.removeEventListener('abort', onAbort)
        this.running++
        resolve(this.releaser())
      }
      const onAbort = (): void => {
        this.waiting.splice(this.waiting.indexOf(start), 1)
        resolve('aborted')
      }
      this.waiting.push(start)
      signal.addEventListener('abort', onAbort, { once: true })
    })
  }

  private releaser(): () => void {
    let released = false
    return () => {
      if (released) return
      released = true
      this.running--
      this.waiting.shift()?.()
    }
  }
}
