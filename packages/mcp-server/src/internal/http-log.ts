import type { IncomingMessage } from 'node:http'
import type { Refusal } from './http-guard.js'

/** Where a request came from: `127.0.0.1:54321`, `[::1]:54321`, or `the unix socket`. */
export function peerOf(request: IncomingMessage): string {
  const { remoteAddress, remotePort } = request.socket
  if (remoteAddress === undefined) return 'the unix socket'
  const host = remoteAddress.includes(':') ? `[${remoteAddress}]` : remoteAddress
  return remotePort === undefined ? host : `${host}:${remotePort}`
}

/** `"claude-code" 2.1.197 (protocol 2025-06-18)`, from an initialize request's body (or a batch holding one). */
export function clientOf(body: unknown): string {
  const messages = Array.isArray(body) ? body : [body]
  const initialize = messages.find(
    (message): message is { params?: { clientInfo?: unknown; protocolVersion?: unknown } } =>
      typeof message === 'object' &&
      message !== null &&
      (message as { method?: unknown }).method === 'initialize',
  )
  const info = initialize?.params?.clientInfo as { name?: unknown; version?: unknown } | undefined
  // A client's own words, quoted: never a control character in the operator's log.
  const quoted = (value: unknown) => JSON.stringify(String(value).slice(0, 100))
  const name = info?.name === undefined ? 'a client that gave no name' : quoted(info.name)
  const version = info?.version === undefined ? '' : ` ${quoted(info.version)}`
  const protocol = initialize?.params?.protocolVersion
  return `${name}${version}${protocol === undefined ? '' : ` (protocol ${quoted(protocol)})`}`
}

/** How often one kind of refusal from one address is logged at most. */
const WINDOW_MS = 10_000
/** The most refusals logged in a window, from every address together; the rest are counted. */
const PER_WINDOW = 20
/** The most addresses and reasons remembered at once (a flood from many cannot grow it). */
const KEYS = 1024

/**
 * Logs requests refused before anything ran (a wrong or missing bearer token, a foreign origin or
 * host): the address, the method and path, the reason and the status. Rate-limited: one line per
 * address and reason per 10 s, at most 20 lines per 10 s in all; what was left out is counted and
 * said with the next line logged.
 */
export class RefusalLog {
  readonly #log: (line: string) => void
  readonly #now: () => number
  readonly #last = new Map<string, number>()
  #windowStart = 0
  #inWindow = 0
  #left = 0

  constructor(log: (line: string) => void, now: () => number = Date.now) {
    this.#log = log
    this.#now = now
  }

  note(request: IncomingMessage, refusal: Refusal): void {
    const now = this.#now()
    const address = request.socket.remoteAddress ?? 'unix'
    const key = `${address} ${refusal.status} ${refusal.message}`
    const last = this.#last.get(key)
    if (now - this.#windowStart >= WINDOW_MS) {
      this.#windowStart = now
      this.#inWindow = 0
    }
    if ((last !== undefined && now - last < WINDOW_MS) || this.#inWindow >= PER_WINDOW) {
      this.#left++
      return
    }
    this.#remember(key, now)
    this.#inWindow++
    const path = (request.url ?? '/').split('?')[0]!.slice(0, 200)
    const left = this.#left > 0 ? ` (and ${this.#left} refused request(s) not logged before it)` : ''
    this.#left = 0
    this.#log(
      `refused ${request.method ?? '?'} ${JSON.stringify(path)} from ${peerOf(request)}: ${refusal.message} (${refusal.status})${left}`,
    )
  }

  #remember(key: string, now: number): void {
    this.#last.delete(key)
    this.#last.set(key, now)
    // The oldest goes first (a Map keeps its insertion order).
    if (this.#last.size > KEYS) this.#last.delete(this.#last.keys().next().value!)
  }
}
