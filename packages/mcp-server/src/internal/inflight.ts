/** The calls of a connection that have not settled yet, so that closing can wait for them. */
export class Inflight {
  private readonly calls = new Map<Promise<unknown>, string>()

  /** Keeps `call` (named `name` in logs) until it settles; returns it. */
  async track<T>(call: Promise<T>, name: string): Promise<T> {
    this.calls.set(call, name)
    try {
      return await call
    } finally {
      this.calls.delete(call)
    }
  }

  /**
   * Resolves once every call has settled, or after `timeoutMs`, logging the ones still running
   * then. Never rejects.
   */
  settled(timeoutMs: number, log: (line: string) => void): Promise<void> {
    if (this.calls.size === 0) return Promise.resolve()
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        const names = [...new Set(this.calls.values())].join(', ')
        log(`${this.calls.size} call(s) still running ${timeoutMs} ms after close: ${names}`)
        resolve()
      }, timeoutMs)
      timer.unref()
      void Promise.allSettled([...this.calls.keys()]).then(() => {
        clearTimeout(timer)
        resolve()
      })
    })
  }
}
