import type { ProgressToken } from '@modelcontextprotocol/server'
import type { ToolProgress } from '@toolvisor/toolbox'
import { McpServerError } from '../errors.js'
import { messageOf } from './result.js'

/** How one call's progress reaches the client. */
export interface CallProgressOptions {
  readonly token: ProgressToken
  /** Sends one `notifications/progress` (the SDK's `extra.sendNotification`). */
  readonly send: (notification: {
    method: 'notifications/progress'
    params: { progressToken: ProgressToken; progress: number; message: string }
  }) => Promise<void>
  /** Aborted when the call is over for the client (cancelled, connection gone). */
  readonly signal: AbortSignal
  /** Logs one line about this call. */
  readonly log: (line: string) => void
  /** How many notifications a second, sustained. */
  readonly perSecond: number
  /** How many may go at once before the rate applies. */
  readonly burst: number
}

/** What became of a call's progress events; the result's `_meta` carries it when some were not sent. */
export interface ProgressCount {
  readonly events: number
  readonly sent: number
  readonly dropped: number
}

/**
 * The progress of one call: `report` never throws and never waits. Notifications are rate-limited
 * by a token bucket (`burst` at once, then `perSecond`); an event that finds no token waits for the
 * next one in place of the event before it (progress counts events, so the latest says it all), and
 * the one still waiting when the call ends is sent then, so the client always sees the last count.
 * An event the transport drops (`MCP_ERR_NOTIFICATION_DROPPED`: the client is not reading) is
 * counted like a coalesced one; any other failure (the transport is gone) is logged once and ends
 * the sending.
 */
export class CallProgress {
  private events = 0
  private sent = 0
  private dropped = 0
  private pending = 0
  private broken = false
  private idle: (() => void) | undefined
  private tokens: number
  private refilled = performance.now()
  /** The latest event that found no token, and the timer that sends it. */
  private waiting: ToolProgress | undefined
  private timer: NodeJS.Timeout | undefined
  /** The call is over: MCP allows no progress after the result. */
  private over = false

  constructor(private readonly options: CallProgressOptions) {
    this.tokens = options.burst
  }

  /** The `ctx.progress` a tool calls for each event. */
  readonly report = (progress: ToolProgress): void => {
    if (this.over) return
    this.events++
    if (this.options.signal.aborted || this.broken) {
      this.dropped++
      return
    }
    if (this.waiting !== undefined) {
      this.dropped++
      this.waiting = progress
      return
    }
    this.refill()
    if (this.tokens >= 1) {
      this.tokens--
      this.send(progress)
      return
    }
    this.waiting = progress
    const wait = ((1 - this.tokens) * 1000) / this.options.perSecond
    this.timer = setTimeout(this.sendWaiting, Math.ceil(wait))
    this.timer.unref()
  }

  private readonly sendWaiting = (): void => {
    const progress = this.waiting
    this.waiting = undefined
    this.timer = undefined
    if (progress === undefined) return
    this.refill()
    this.tokens = Math.max(0, this.tokens - 1)
    if (this.options.signal.aborted || this.broken) this.dropped++
    else this.send(progress)
  }

  private refill(): void {
    const now = performance.now()
    const earned = ((now - this.refilled) / 1000) * this.options.perSecond
    this.tokens = Math.min(this.options.burst, this.tokens + earned)
    this.refilled = now
  }

  private send(progress: ToolProgress): void {
    this.pending++
    let sending: Promise<void>
    try {
      sending = this.options.send({
        method: 'notifications/progress',
        params: { progressToken: this.options.token, progress: progress.progress, message: progress.message },
      })
    } catch (error) {
      sending = Promise.reject(error)
    }
    sending.then(
      () => this.settle('sent'),
      (error: unknown) => this.settle(error),
    )
  }

  /**
   * Call it once the call is over: sends the event still waiting for a token, then, once every send
   * has settled, gives the count, or undefined when every event was sent.
   */
  async count(): Promise<ProgressCount | undefined> {
    clearTimeout(this.timer)
    this.sendWaiting()
    this.over = true
    if (this.pending > 0) await new Promise<void>((resolve) => (this.idle = resolve))
    if (this.dropped === 0) return undefined
    return { events: this.events, sent: this.sent, dropped: this.dropped }
  }

  private settle(outcome: unknown): void {
    if (outcome === 'sent') this.sent++
    else this.fail(outcome)
    if (--this.pending === 0) this.idle?.()
  }

  private fail(error: unknown): void {
    this.dropped++
    if (McpServerError.is(error) && error.code === 'MCP_ERR_NOTIFICATION_DROPPED') return
    if (this.broken) return
    this.broken = true
    this.options.log(`a progress notification could not be sent (${messageOf(error)}); dropping the rest`)
  }
}
