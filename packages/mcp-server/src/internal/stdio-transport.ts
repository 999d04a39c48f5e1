import type { Readable, Writable } from 'node:stream'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import { type ErrorAnswer, inspect } from './inbound.js'
import { LineReader } from './line-reader.js'

/** How a `StdioTransport` reads and writes. */
export interface StdioTransportOptions {
  readonly stdin: Readable
  readonly stdout: Writable
  /** The largest message read; a longer line is discarded unread and answered with an error. */
  readonly maxMessageBytes: number
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
  private readonly reader: LineReader
  private started = false
  private closed = false

  constructor(private readonly options: StdioTransportOptions) {
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
    if (this.started) throw new Error('StdioTransport: already started; one transport serves one connection')
    this.started = true
    const { stdin, stdout } = this.options
    stdin.on('data', this.onData)
    stdin.on('error', this.onInputError)
    // The SDK's transport does not watch for EOF (typescript-sdk#2002): without this a client that
    // closes our stdin would leave the server, and its tools, running.
    stdin.on('end', this.onEnd)
    stdin.on('close', this.onEnd)
    stdout.on('error', this.onOutputError)
  }

  async send(message: JSONRPCMessage): Promise<void> {
    this.write(message)
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    const { stdin, stdout } = this.options
    stdin.off('data', this.onData)
    stdin.off('error', this.onInputError)
    stdin.off('end', this.onEnd)
    stdin.off('close', this.onEnd)
    stdout.off('error', this.onOutputError)
    if (stdin.listenerCount('data') === 0) stdin.pause()
    this.onclose?.()
  }

  private answer(answer: ErrorAnswer): void {
    this.options.log(`refused a message: ${answer.error.message}`)
    this.write(answer)
  }

  private write(message: JSONRPCMessage | ErrorAnswer): void {
    if (this.closed) return
    this.options.stdout.write(`${JSON.stringify(message)}\n`)
  }

  private readonly onData = (chunk: Buffer | string): void => {
    this.reader.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk)
  }

  private readonly onInputError = (error: Error): void => {
    this.onerror?.(error)
  }

  private readonly onEnd = (): void => {
    void this.close()
  }

  private readonly onOutputError = (error: Error): void => {
    this.options.log(`stdout failed (${error.message}); closing`)
    void this.close()
  }
}
