import type { Socket } from 'node:net'
import type { Admission, Clearance, Passage, Refusal } from './admission.js'

/** How long a connection may take to say what it wants (its first request or SOCKS handshake). */
export const HANDSHAKE_MS = 30_000
/** How long a refused client has to read the answer and hang up before the proxy hangs up on it. */
const LINGER_MS = 5_000

/**
 * One connection to a gate, from accept to close: its signal (aborted when the socket closes,
 * which ends whatever is being decided or dialed for it), its deadline to say what it wants, and
 * the way it is ended after a refusal.
 */
export class Client {
  readonly socket: Socket
  readonly signal: AbortSignal
  /** Plain HTTP requests of this connection not yet answered (a parse error mid-answer cannot be told). */
  answering = 0
  /**
   * The connection came from the bridge of `toolvisor-netns --handoff` (it started with the
   * bridge's hello, on a gate's unix socket): an approved CONNECT may be handed to the bridge.
   */
  fromBridge = false
  /** The gate's decision, which this client's connections go through. */
  readonly admission: Admission
  #deadline: NodeJS.Timeout | undefined

  constructor(socket: Socket, admission: Admission) {
    this.socket = socket
    this.admission = admission
    const controller = new AbortController()
    this.signal = controller.signal
    this.#deadline = setTimeout(() => socket.destroy(), HANDSHAKE_MS)
    socket.once('close', () => {
      clearTimeout(this.#deadline)
      controller.abort()
    })
  }

  /** The client said what it wants: its handshake deadline is over. */
  requested(): void {
    clearTimeout(this.#deadline)
    this.#deadline = undefined
  }

  /** A connection for this client, or its refusal; undefined once the client is gone. */
  admit(requested: { readonly host: string; readonly port: number }): Promise<Passage | Refusal | undefined> {
    return this.admission.admit(requested, this.signal)
  }

  /** The decision for this client without the connection (the bridge makes it); undefined once the client is gone. */
  clear(requested: {
    readonly host: string
    readonly port: number
  }): Promise<Clearance | Refusal | undefined> {
    return this.admission.clear(requested, this.signal)
  }

  /**
   * Sends `data` and ends the connection: the end follows the data, so that the client reads all
   * of it (a reset could discard it); a client that does not hang up in turn is cut after a while.
   */
  finish(data: string | Uint8Array): void {
    if (this.socket.destroyed) return
    this.socket.end(data)
    const cut = setTimeout(() => this.socket.destroy(), LINGER_MS)
    this.socket.once('close', () => clearTimeout(cut))
  }
}
