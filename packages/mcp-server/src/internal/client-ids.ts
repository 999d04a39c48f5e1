import type {
  JSONRPCMessage,
  MessageExtraInfo,
  RequestId,
  Transport,
  TransportSendOptions,
} from '@modelcontextprotocol/server'

/**
 * Gives every request from the client an id of our own (1, 2, 3, ...) on its way to the SDK, and
 * its own id back on the answer. It was made because the v1 SDK ignored `notifications/cancelled`
 * for request id 0 (typescript-sdk#2283, fixed in v2); it stays because a cancel for a request
 * that is over is dropped here, so it cannot reach a later request that happens to carry our id
 * for it, and the id the SDK sees is then never one the client chose.
 */
export class ClientIds implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void
  private next = 1
  /** Ours to the client's, for requests not yet answered. */
  private readonly theirs = new Map<number, RequestId>()
  /** The client's (by `keyOf`) to ours. */
  private readonly ours = new Map<string, number>()

  constructor(private readonly inner: Transport) {}

  get sessionId(): string | undefined {
    return this.inner.sessionId
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version)
  }

  start(): Promise<void> {
    this.inner.onmessage = (message, extra) => {
      const mapped = this.fromClient(message)
      if (mapped !== undefined) this.onmessage?.(mapped, extra)
    }
    this.inner.onerror = (error) => this.onerror?.(error)
    this.inner.onclose = () => {
      this.theirs.clear()
      this.ours.clear()
      this.onclose?.()
    }
    return this.inner.start()
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const related = options?.relatedRequestId
    const mapped = typeof related === 'number' && this.theirs.has(related)
    const sendOptions = mapped ? { ...options, relatedRequestId: this.theirs.get(related) } : options
    return this.inner.send(this.toClient(message), sendOptions)
  }

  close(): Promise<void> {
    return this.inner.close()
  }

  private fromClient(message: JSONRPCMessage): JSONRPCMessage | undefined {
    if ('method' in message && 'id' in message) {
      const ours = this.next++
      this.theirs.set(ours, message.id)
      this.ours.set(keyOf(message.id), ours)
      return { ...message, id: ours }
    }
    if ('method' in message && message.method === 'notifications/cancelled') {
      const requestId = message.params?.requestId as RequestId | undefined
      const ours = requestId === undefined ? undefined : this.ours.get(keyOf(requestId))
      if (ours === undefined) return undefined
      this.forget(ours)
      return { ...message, params: { ...message.params, requestId: ours } }
    }
    return message
  }

  private toClient(message: JSONRPCMessage): JSONRPCMessage {
    if ('method' in message || !('id' in message) || typeof message.id !== 'number') return message
    const theirs = this.theirs.get(message.id)
    if (theirs === undefined) return message
    this.forget(message.id)
    return { ...message, id: theirs }
  }

  private forget(ours: number): void {
    const theirs = this.theirs.get(ours)
    this.theirs.delete(ours)
    if (theirs !== undefined && this.ours.get(keyOf(theirs)) === ours) this.ours.delete(keyOf(theirs))
  }
}

/** The string 5 and the number 5 are two ids. */
function keyOf(id: RequestId): string {
  return `${typeof id}:${id}`
}
