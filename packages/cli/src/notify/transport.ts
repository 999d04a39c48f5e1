import { connect, type Socket } from 'node:net'
import type { NotifyTarget } from './target.js'

/** Hands one item (its JSON text) to the harness; rejects when the harness did not take it in time. */
export interface NotifySender {
  send(json: string): Promise<void>
  /** Drops the connection, if any. */
  close(): void
}

/** A sender for a target: JSON lines over one kept unix stream connection, or one JSON POST per item. */
export function senderFor(target: NotifyTarget, timeoutMs: number): NotifySender {
  return target.kind === 'unix' ? new UnixLines(target.path, timeoutMs) : new HttpPosts(target.url, timeoutMs)
}

/**
 * JSON lines over a unix stream socket, connected on the first item and again after a failure. An
 * item is sent once the socket took it whole; a harness that stops reading fills the socket's
 * buffer, the write waits for room at most `timeoutMs`, and the connection is dropped.
 */
class UnixLines implements NotifySender {
  readonly #path: string
  readonly #timeoutMs: number
  #socket: Socket | undefined

  constructor(path: string, timeoutMs: number) {
    this.#path = path
    this.#timeoutMs = timeoutMs
  }

  async send(json: string): Promise<void> {
    const socket = this.#socket ?? (await this.#connect())
    try {
      // The callback comes once the kernel took the line: at once, or when a reader made room.
      await bounded(this.#timeoutMs, 'the harness did not read', (done, fail) => {
        socket.write(`${json}\n`, (error) => (error ? fail(error) : done()))
      })
    } catch (error) {
      this.close()
      throw error
    }
  }

  close(): void {
    this.#socket?.destroy()
    this.#socket = undefined
  }

  async #connect(): Promise<Socket> {
    const socket = connect(this.#path)
    // The harness may say things back; nothing here listens: what it sends is read and let go.
    socket.on('data', () => {})
    socket.on('error', () => {
      if (this.#socket === socket) this.#socket = undefined
    })
    await bounded(this.#timeoutMs, 'no connection', (done, fail) => {
      socket.once('connect', done)
      socket.once('error', fail)
    }).catch((error: unknown) => {
      socket.destroy()
      throw error
    })
    socket.removeAllListeners('connect')
    socket.once('close', () => {
      if (this.#socket === socket) this.#socket = undefined
    })
    this.#socket = socket
    return socket
  }
}

/** One JSON POST per item; any 2xx answer takes it. */
class HttpPosts implements NotifySender {
  readonly #url: URL
  readonly #timeoutMs: number

  constructor(url: URL, timeoutMs: number) {
    this.#url = url
    this.#timeoutMs = timeoutMs
  }

  async send(json: string): Promise<void> {
    const response = await fetch(this.#url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: json,
      signal: AbortSignal.timeout(this.#timeoutMs),
    })
    await response.body?.cancel()
    if (!response.ok) throw new Error(`HTTP ${response.status}`)
  }

  close(): void {}
}

/** Runs `start`, which calls `done` or `fail`; rejects with `why` when neither came within `ms`. */
function bounded(
  ms: number,
  why: string,
  start: (done: () => void, fail: (error: Error) => void) => void,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${why} within ${ms} ms`)), ms)
    start(
      () => {
        clearTimeout(timer)
        resolve()
      },
      (error) => {
        clearTimeout(timer)
        reject(error)
      },
    )
  })
}
