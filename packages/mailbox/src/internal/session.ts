import type { Sender } from '../envelope.js'
import type { WaitOptions, WaitResult, WakeOn } from '../types.js'
import type { Source } from './source.js'

/** Ends one wait with a result. */
export type Waiter = (result: WaitResult) => void

/** What the mailbox holds for an open session besides the store. */
export interface SessionState {
  readonly id: string
  wakes: (from: Sender) => boolean
  /** Envelopes after the delivery cursor (kept here so a post need not count them). */
  unread: number
  /** The greatest seq given so far. */
  lastSeq: number
  readonly sources: Map<Sender, Source>
  readonly waiters: Set<Waiter>
}

/** The predicate a wake rule stands for; absent: every sender wakes. */
export function wakeRule(wakeOn: WakeOn | undefined): (from: Sender) => boolean {
  if (wakeOn === undefined) return () => true
  if (typeof wakeOn === 'function') return wakeOn
  const prefixes = [...wakeOn]
  return (from) => prefixes.some((prefix) => from.startsWith(prefix))
}

/** Blocks until a waiter is called (mail, a close), the bound passes or the signal aborts. */
export function block(waiters: Set<Waiter>, options: WaitOptions): Promise<WaitResult> {
  const { timeoutMs, signal } = options
  if (signal?.aborted) return Promise.resolve({ reason: 'aborted' })
  return new Promise((resolve) => {
    // Not unref'd: a caller is awaiting this promise, so the process should stay up for it.
    let timer: NodeJS.Timeout | undefined
    const finish: Waiter = (result) => {
      waiters.delete(finish)
      clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
      resolve(result)
    }
    const onAbort = (): void => finish({ reason: 'aborted' })
    waiters.add(finish)
    signal?.addEventListener('abort', onAbort, { once: true })
    if (timeoutMs !== undefined)
      timer = setTimeout(() => finish({ reason: 'timeout' }), Math.max(0, timeoutMs))
  })
}

/** Ends every wait of a session with `result`. */
export function wakeAll(waiters: Set<Waiter>, result: WaitResult): void {
  for (const waiter of [...waiters]) waiter(result)
}
