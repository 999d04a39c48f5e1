import { createHash, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage } from 'node:http'

/** Why a request is refused before anything runs, as the HTTP answer says it. */
export interface Refusal {
  readonly status: 401 | 403
  readonly message: string
  readonly headers?: Readonly<Record<string, string>>
}

/** What a request must show: the bearer token, and an Origin (when it has one) from the allow-list. */
export interface Guard {
  readonly token: string
  /** Origins a browser page may call from (`http://127.0.0.1:PORT`, ...); others are refused. */
  readonly allowedOrigins: readonly string[]
  /**
   * `Host` headers accepted (`127.0.0.1:PORT`, `localhost:PORT`, ...): a page whose DNS was rebound
   * to this machine still sends its own host name. Empty: any (a unix socket has no host).
   */
  readonly allowedHosts: readonly string[]
}

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest()

/**
 * Checks a request: `Authorization: Bearer <token>` compared in constant time (both sides hashed
 * first, so neither the content nor the length leaks), and the `Origin` header, which browsers
 * send and DNS rebinding would forge the host of, against the allow-list.
 */
export function refusalOf(request: IncomingMessage, guard: Guard): Refusal | undefined {
  return originRefusal(request, guard) ?? bearerRefusal(request, guard)
}

/**
 * A foreign `Origin` (a browser page elsewhere) or `Host` (DNS rebinding) is refused whatever else
 * the request shows.
 */
export function originRefusal(request: IncomingMessage, guard: Guard): Refusal | undefined {
  const host = request.headers.host
  if (
    guard.allowedHosts.length > 0 &&
    (host === undefined || !guard.allowedHosts.includes(host.toLowerCase()))
  ) {
    return {
      status: 403,
      message: `host ${JSON.stringify((host ?? '').slice(0, 200))} is not this server (allowed: ${guard.allowedHosts.join(', ')})`,
    }
  }
  const origin = request.headers.origin
  if (origin === undefined || guard.allowedOrigins.includes(origin)) return undefined
  return {
    status: 403,
    message: `origin ${JSON.stringify(origin.slice(0, 200))} is not allowed (allowed: ${guard.allowedOrigins.join(', ') || 'none'}); add it with --allow-origin`,
  }
}

/** Whether `given` is `token`, in constant time (both hashed first: neither content nor length leaks). */
export function sameToken(given: string, token: string): boolean {
  return given.length > 0 && timingSafeEqual(digest(given), digest(token))
}

/** The request does not carry `Authorization: Bearer <token>`. */
export function bearerRefusal(request: IncomingMessage, guard: Guard): Refusal | undefined {
  const header = request.headers.authorization ?? ''
  const match = /^Bearer +(\S+)$/i.exec(header)
  const given = match?.[1] ?? ''
  if (!sameToken(given, guard.token)) {
    return {
      status: 401,
      message: header === '' ? 'missing Authorization: Bearer <token>' : 'wrong bearer token',
      headers: { 'www-authenticate': 'Bearer realm="toolvisor"' },
    }
  }
  return undefined
}
