import type { Sender } from '../envelope.js'
import type { WaitOptions, WaitResult, WakeOn } from '../types.js'
import type { Source } from './source.js'

/** Ends one wait with a result; `wakes`, when set, picks the senders whose news ends it. */
export type Waiter = ((result: WaitResult) => void) & { wakes?: (from: Sender) => boolean }

/** Hears the news of a session (see `Mailbox.watch`). */
export type Watcher = (from: Sender) => void

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
  readonly watchers: Set<Watcher>
}

/** The predicate a wake rule stands for; absent: every sender wakes. */
export function wakeRule(wakeOn: WakeOn | undefined): (from: Sender) => boolean {
  if (wakeOn === undefined) return () => true
  if (typeof wakeOn === 'function') return wakeOn
  const prefixes = [...wakeOn]
  return (from) => prefixes.some((prefix) => from.startsWith(prefix))
}

/**
 * Blocks until a waiter is called (mail, a close), the bound passes or the signal aborts; `wakes`
 * (from `options.from`) picks the senders whose news ends this wait.
 */
export function block(
  waiters: Set<Waiter>,
  options: WaitOptions,
  wakes: ((from: Sender) => boolean) | undefined,
): Promise<WaitResult> {
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
    if (wakes !== undefined) finish.wakes = wakes
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

/**
 * Ends the waits that news from `from` wakes: those with a sender rule of their own by it, the
 * others by the session's rule.
 */
export function wakeFor(state: SessionState, from: Sender): void {
  for (const waiter of [...state.waiters]) {
    if ((waiter.wakes ?? state.wakes)(from)) waiter({ reason: 'mail', from })
  }
}

/** Tells the session's watchers of news from `from`; a watcher that throws hides it from no other. */
export function tellWatchers(state: SessionState, from: Sender): void {
  for (const watcher of [...state.watchers]) {
    try {
      watcher(from)
    } catch (error) {
      // A watcher's bug must not stop mail from being accepted; it is reported, never swallowed.
      process.emitWarning(error as Error)
    }
  }
}
