import type { ProgressToken } from '@modelcontextprotocol/sdk/types.js'
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
}

/** What became of a call's progress events; the result's `_meta` carries it when some were not sent. */
export interface ProgressCount {
  readonly events: number
  readonly sent: number
  readonly dropped: number
}

/**
 * The progress of one call: `report` never throws and never waits. An event the transport drops
 * (`MCP_ERR_NOTIFICATION_DROPPED`: the client is not reading) is counted; any other failure (the
 * transport is gone) is logged once and ends the sending.
 */
export class CallProgress {
  private events = 0
  private sent = 0
  private dropped = 0
  private pending = 0
  private broken = false
  private idle: (() => void) | undefined

  constructor(private readonly options: CallProgressOptions) {}

  /** The `ctx.progress` a tool calls for each event. */
  readonly report = (progress: ToolProgress): void => {
    this.events++
    if (this.options.signal.aborted || this.broken) {
      this.dropped++
      return
    }
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

  /** Once every send has settled: the count, or undefined when every event was sent. */
  async count(): Promise<ProgressCount | undefined> {
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
