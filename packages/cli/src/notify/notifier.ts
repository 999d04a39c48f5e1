import type { Mailbox } from '@toolvisor/mailbox'
import type { TaskRegistry } from '@toolvisor/tasks'
import { followTasks } from './items.js'
import { NotifyQueue } from './queue.js'
import { type NotifyTarget, shownTarget } from './target.js'
import { senderFor } from './transport.js'

/** The bounds of `serve --notify` (decision 0051). */
export const NOTIFY_BOUNDS = {
  /** Items waiting for the harness at most. */
  capacity: 1000,
  /** Tries per item. */
  attempts: 5,
  /** The first backoff; doubled after each failed try (100, 200, 400, 800 ms). */
  backoffMs: 100,
  /** How long one try may take: the connection, the write, or the HTTP answer. */
  timeoutMs: 2000,
  /** How long a shutdown waits for the last items. */
  flushMs: 2000,
} as const

/** A running notifier. */
export interface Notifier {
  /** Stops following, waits (at most `NOTIFY_BOUNDS.flushMs`) for what waits to go, and disconnects. */
  close(): Promise<void>
}

/** Pushes the harness its keyed items (`followTasks`) at `target`, never in the way of a call. */
export function startNotifier(options: {
  readonly target: NotifyTarget
  readonly tasks: TaskRegistry
  readonly mailbox?: Mailbox
  readonly log: (line: string) => void
  readonly bounds?: Partial<typeof NOTIFY_BOUNDS>
}): Notifier {
  const bounds = { ...NOTIFY_BOUNDS, ...options.bounds }
  const sender = senderFor(options.target, bounds.timeoutMs)
  const where = shownTarget(options.target)
  const queue = new NotifyQueue({
    sender,
    capacity: bounds.capacity,
    attempts: bounds.attempts,
    backoffMs: bounds.backoffMs,
    log: (line) => options.log(`${line} (to ${where})`),
  })
  const stop = followTasks(options.tasks, options.mailbox, (item) => queue.put(item))
  return {
    async close() {
      stop()
      const left = queue.size
      await queue.drained(bounds.flushMs)
      if (queue.size > 0)
        options.log(
          `toolvisor: notify: ${queue.size} of ${left} items not sent before the shutdown (to ${where})`,
        )
      sender.close()
    },
  }
}
