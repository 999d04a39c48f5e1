import type { ServerResponse } from 'node:http'
import { SECURITY_HEADERS } from '../http.js'

/** A comment line this often keeps an idle stream (and the proxies on its way) open. */
const KEEPALIVE_MS = 15_000

/**
 * One server-sent event stream. Writes never queue without bound: `offer` keeps only the newest
 * message while the client has not drained the last one (the state stream), and `writable` tells
 * a reader with a cursor (a tail) to wait for `drain` instead of reading on.
 */
export class EventStream {
  readonly #response: ServerResponse
  readonly #keepalive: NodeJS.Timeout
  #pending: string | undefined
  #closed = false
  readonly #onClose: Array<() => void> = []

  constructor(response: ServerResponse) {
    this.#response = response
    response.writeHead(200, {
      ...SECURITY_HEADERS,
      'content-type': 'text/event-stream; charset=utf-8',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    })
    response.write(': toolvisor operator page\n\n')
    this.#keepalive = setInterval(() => this.#write(': keepalive\n\n'), KEEPALIVE_MS)
    this.#keepalive.unref()
    response.on('close', () => this.#end())
    response.on('drain', () => {
      const pending = this.#pending
      this.#pending = undefined
      if (pending !== undefined) this.#write(pending)
    })
  }

  get closed(): boolean {
    return this.#closed
  }

  /** Whether a write now goes out at once (the client drained what came before). */
  get writable(): boolean {
    return !this.#closed && !this.#response.writableNeedDrain
  }

  /** Sends one event now, whatever is queued (a reader with a cursor checks `writable` first). */
  send(event: string, data: unknown, id?: string): void {
    this.#write(frame(event, data, id))
  }

  /** Sends one event, or keeps it as the one to send at the next drain (replacing an older one). */
  offer(event: string, data: unknown): void {
    const text = frame(event, data, undefined)
    if (this.writable) this.#write(text)
    else this.#pending = text
  }

  /** Waits until the client drained what was written (or the stream closed). */
  drained(): Promise<void> {
    if (this.writable || this.#closed) return Promise.resolve()
    return new Promise((resolve) => {
      const done = () => {
        this.#response.off('drain', done)
        resolve()
      }
      this.#response.on('drain', done)
      this.onClose(done)
    })
  }

  /** Runs `listener` once the stream closes (at once if it has). */
  onClose(listener: () => void): void {
    if (this.#closed) listener()
    else this.#onClose.push(listener)
  }

  /** Ends the stream from this side. */
  close(): void {
    if (!this.#closed) this.#response.end()
    this.#end()
  }

  #write(text: string): void {
    if (!this.#closed) this.#response.write(text)
  }

  #end(): void {
    if (this.#closed) return
    this.#closed = true
    clearInterval(this.#keepalive)
    for (const listener of this.#onClose.splice(0)) listener()
  }
}

/** One SSE frame; the data is JSON, on one line. */
function frame(event: string, data: unknown, id: string | undefined): string {
  return `${id !== undefined ? `id: ${id}\n` : ''}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`
}
