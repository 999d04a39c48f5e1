import type { Readable, Writable } from 'node:stream'
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/server'
import { McpServerError } from '../errors.js'
import { type ErrorAnswer, inspect } from './inbound.js'
import { latch } from './lifecycle.js'
import { LineReader } from './line-reader.js'

/** How a `StdioTransport` reads and writes. */
export interface StdioTransportOptions {
  readonly stdin: Readable
  readonly stdout: Writable
  /** The largest message read; a longer line is discarded unread and answered with an error. */
  readonly maxMessageBytes: number
  /** The most bytes that may wait for a client that does not read stdout; more ends the session. */
  readonly maxQueuedBytes: number
  /** Logs one line (already prefixed with the server name). */
  readonly log: (line: string) => void
}

/**
 * MCP over stdio, one JSON-RPC message per line, in place of the SDK's `StdioServerTransport`: its
 * line reader is bounded (an overlong line is answered and skipped, never buffered whole and never
 * fatal), bad input is answered as JSON-RPC says instead of dropped, and EOF on stdin closes it.
 */
export class StdioTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void
  /** Resolves once the transport has closed, from either side (the SDK's entry owns `onclose`). */
  readonly ended: Promise<void>
  private readonly resolveEnded: () => void
  private readonly reader: LineReader
  private started = false
  private closed = false
  /** Notifications dropped since answers began to wait for the client; undefined while none wait. */
  private dropping: number | undefined

  constructor(private readonly options: StdioTransportOptions) {
    const [ended, resolveEnded] = latch()
    this.ended = ended
    this.resolveEnded = resolveEnded
    this.reader = new LineReader(options.maxMessageBytes, (line) => {
      const inbound = inspect(line, options.maxMessageBytes)
      if (inbound.kind === 'answer') {
        for (const answer of inbound.answers) this.answer(answer)
      } else if (inbound.kind === 'ignore') {
        if (inbound.why !== '') options.log(`ignored a message: ${inbound.why}`)
      } else {
        if (inbound.note !== undefined) options.log(inbound.note)
        this.onmessage?.(inbound.message)
      }
    })
  }

  async start(): Promise<void> {
    if (this.started) {
      throw new McpServerError(
        'MCP_ERR_ALREADY_CONNECTED',
        'StdioTransport: already started; one transport serves one connection',
      )
    }
    this.started = true
    for (const [stream, event, listener] of this.listeners()) stream.on(event, listener)
  }

  /**
   * Writes at once and never waits for `drain`: what waits is bounded here instead. While answers
   * wait for the client, progress and log notifications are refused (`MCP_ERR_NOTIFICATION_DROPPED`:
   * they are worth least and come by the thousand); a message that would make more than
   * `maxQueuedBytes` wait ends the session (`MCP_ERR_CLIENT_NOT_READING`), which cancels its calls.
   */
  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) return
    const { stdout } = this.options
    if (droppable(message) && stdout.writableNeedDrain) {
      this.drop(stdout.writableLength)
      throw new McpServerError(
        'MCP_ERR_NOTIFICATION_DROPPED',
        `${message.method} dropped: ${stdout.writableLength} bytes wait for a client that is not reading`,
      )
    }
    this.write(message)
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    const { stdin, stdout } = this.options
    for (const [stream, event, listener] of this.listeners()) stream.off(event, listener)
    stdout.off('drain', this.onDrain)
    if (stdin.listenerCount('data') === 0) stdin.pause()
    this.onclose?.()
    this.resolveEnded()
  }

  /** What the transport listens to while it is open. */
  private listeners(): Array<[Readable | Writable, string, Parameters<NodeJS.EventEmitter['on']>[1]]> {
    const { stdin, stdout } = this.options
    return [
      [stdin, 'data', this.onData],
      [stdin, 'error', this.onInputError],
      // The SDK's transport does not watch for EOF (typescript-sdk#2002): without this a client that
      // closes our stdin would leave the server, and its tools, running.
      [stdin, 'end', this.onEnd],
      [stdin, 'close', this.onEnd],
      [stdout, 'error', this.onOutputError],
    ]
  }

  private answer(answer: ErrorAnswer): void {
    this.options.log(`refused a message: ${answer.error.message}`)
    try {
      this.write(answer)
    } catch {
      // Over maxQueuedBytes: the session is closing, and it was logged.
    }
  }

  private write(message: JSONRPCMessage | ErrorAnswer): void {
    if (this.closed) return
    const { stdout, maxQueuedBytes, log } = this.options
    const line = `${JSON.stringify(message)}\n`
    const waiting = stdout.writableLength + Buffer.byteLength(line)
    // One message, however large, always goes out when nothing waits: the bound is on backlog.
    if (stdout.writableLength > 0 && waiting > maxQueuedBytes) {
      const why = `the client is not reading stdout: ${waiting} bytes wait for it, over maxQueuedBytes ${maxQueuedBytes}; closing the session`
      log(why)
      void this.close()
      throw new McpServerError('MCP_ERR_CLIENT_NOT_READING', why)
    }
    stdout.write(line)
  }

  private drop(waiting: number): void {
    if (this.dropping === undefined) {
      this.dropping = 0
      this.options.log(
        `the client is not reading stdout: ${waiting} bytes wait for it; progress notifications are dropped until it reads`,
      )
      this.options.stdout.once('drain', this.onDrain)
    }
    this.dropping++
  }

  private readonly onData = (chunk: Buffer | string): void => {
    this.reader.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk)
  }

  private readonly onInputError = (error: Error): void => {
    this.onerror?.(error)
  }

  private readonly onDrain = (): void => {
    if (this.closed) return
    this.options.log(`the client reads stdout again; ${this.dropping} notifications were dropped meanwhile`)
    this.dropping = undefined
  }

  private readonly onEnd = (): void => {
    void this.close()
  }

  private readonly onOutputError = (error: Error): void => {
    this.options.log(`stdout failed (${error.message}); closing`)
    void this.close()
  }
}

/** Notifications a client can miss: each progress one is superseded by the next, logs are advisory. */
function droppable(message: JSONRPCMessage): message is JSONRPCMessage & { method: string } {
  return (
    'method' in message &&
    !('id' in message) &&
    (message.method === 'notifications/progress' || message.method === 'notifications/message')
  )
}
