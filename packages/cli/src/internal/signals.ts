/** The signals that shut a command down (a terminal's Ctrl-C, a service manager's stop). */
const SHUTDOWN = ['SIGINT', 'SIGTERM'] as const

/** A command's shutdown: the first SIGINT or SIGTERM, listened for until `off`. */
export interface ShutdownSignals {
  /** Aborted at the first of them (a second one during the shutdown changes nothing). */
  readonly signal: AbortSignal
  /** Resolves at the first of them. */
  readonly stopped: Promise<void>
  /** Stops listening. */
  off(): void
}

/** Listens for SIGINT and SIGTERM on `signals` (the process, or a test's emitter). */
export function withShutdownSignals(signals: NodeJS.EventEmitter): ShutdownSignals {
  const controller = new AbortController()
  const stopped = new Promise<void>((resolve) => {
    controller.signal.addEventListener('abort', () => resolve(), { once: true })
  })
  const onSignal = () => controller.abort()
  for (const name of SHUTDOWN) signals.on(name, onSignal)
  return {
    signal: controller.signal,
    stopped,
    off: () => {
      for (const name of SHUTDOWN) signals.off(name, onSignal)
    },
  }
}
