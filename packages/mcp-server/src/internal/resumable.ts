/**
 * SSE resumability (SEP-1699) for one MCP session over Streamable HTTP: every message a stream
 * carries is kept, within a bound, under an event id; a client whose stream broke (or that the
 * server closed) comes back with `Last-Event-ID` and gets what it missed. Decision 0071.
 */
import type { IncomingMessage } from 'node:http'
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node'
import type { EventStore, JSONRPCMessage } from '@modelcontextprotocol/server'

/** How long a client waits before it reconnects a stream that ended (the SSE `retry` field). */
export const SSE_RETRY_MS = 1000

/** What one session's event store keeps at most: the newest events within both bounds. */
export interface EventBounds {
  readonly events: number
  readonly bytes: number
}

/** The default bounds: enough for a reconnect after a dropped connection, never a growing log. */
export const DEFAULT_EVENT_BOUNDS: EventBounds = { events: 1000, bytes: 4 * 1024 * 1024 }

interface Kept {
  readonly id: string
  readonly stream: string
  readonly message: JSONRPCMessage
  readonly bytes: number
}

/**
 * The events of one session, in order, the oldest dropped past the bounds. An event id is
 * `<stream>_<n>`: `n` counts across the session, so ids are never reused.
 */
export class SessionEvents implements EventStore {
  readonly #kept: Kept[] = []
  readonly #bounds: EventBounds
  #bytes = 0
  #next = 0

  constructor(bounds: EventBounds = DEFAULT_EVENT_BOUNDS) {
    this.#bounds = bounds
  }

  async storeEvent(stream: string, message: JSONRPCMessage): Promise<string> {
    const id = `${stream}_${++this.#next}`
    const bytes = Buffer.byteLength(JSON.stringify(message))
    this.#kept.push({ id, stream, message, bytes })
    this.#bytes += bytes
    while (this.#kept.length > this.#bounds.events || this.#bytes > this.#bounds.bytes) {
      this.#bytes -= this.#kept.shift()?.bytes ?? 0
    }
    return id
  }

  async getStreamIdForEventId(id: string): Promise<string | undefined> {
    return streamOf(id)
  }

  /** Sends the events of the stream of `lastEventId` that came after it; the stream's id. */
  async replayEventsAfter(
    lastEventId: string,
    { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> },
  ): Promise<string> {
    const stream = streamOf(lastEventId)
    if (stream === undefined)
      throw new Error(`Last-Event-ID ${JSON.stringify(lastEventId)} is not an event id of this server`)
    const after = Number(lastEventId.slice(stream.length + 1))
    for (const event of this.#kept) {
      if (event.stream !== stream || Number(event.id.slice(stream.length + 1)) <= after) continue
      // A priming event (`{}`) holds no message: only its id was ever sent.
      if (Object.keys(event.message).length === 0) continue
      await send(event.id, event.message)
    }
    return stream
  }
}

function streamOf(id: string): string | undefined {
  const cut = id.lastIndexOf('_')
  return cut > 0 && /^\d+$/.test(id.slice(cut + 1)) ? id.slice(0, cut) : undefined
}

/**
 * The SDK transport of one MCP session, with resumability, remembering the protocol version the
 * session negotiated: each request is served at that version (`servedAtNegotiated`).
 */
export class SessionTransport extends NodeStreamableHTTPServerTransport {
  #negotiated: string | undefined

  override async send(
    message: JSONRPCMessage,
    options?: Parameters<NodeStreamableHTTPServerTransport['send']>[1],
  ) {
    if (
      'result' in message &&
      typeof message.result.protocolVersion === 'string' &&
      this.#negotiated === undefined
    ) {
      this.#negotiated = message.result.protocolVersion
    }
    return super.send(message, options)
  }

  /**
   * A request whose `MCP-Protocol-Version` names an older version than the session negotiated is
   * served at the negotiated one: the session's version decides what its streams may carry
   * (priming events need 2025-11-25), not a header that contradicts it.
   */
  servedAtNegotiated(request: IncomingMessage): void {
    const negotiated = this.#negotiated
    const said = request.headers['mcp-protocol-version']
    if (negotiated === undefined || typeof said !== 'string' || said >= negotiated) return
    request.headers['mcp-protocol-version'] = negotiated
    const raw = request.rawHeaders
    for (let i = 0; i < raw.length; i += 2) {
      if (raw[i]?.toLowerCase() === 'mcp-protocol-version') raw[i + 1] = negotiated
    }
  }
}
