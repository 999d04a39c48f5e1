import type { IncomingMessage, ServerResponse } from 'node:http'

/**
 * The Content-Security-Policy of every answer: scripts, styles and connections from the page's
 * own origin only, nothing inline, no frames, no base or form target elsewhere.
 */
export const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; " +
  "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

/**
 * The page's own policy: `CSP`, with one more source for styles, a nonce made for this answer.
 * xterm.js builds its cell styles as `<style>` elements; the page's script stamps the nonce on
 * each it creates, so they apply and nothing inline from elsewhere does (decision 0110).
 */
export function pageCsp(nonce: string): string {
  return CSP.replace("style-src 'self'", `style-src 'self' 'nonce-${nonce}'`)
}

/**
 * The headers every answer of the page carries, 401s and event streams included. The referrer
 * policy is `same-origin`, not `no-referrer`: under `no-referrer` a browser sends `Origin: null`
 * with the page's own POSTs (the login form, the actions), which the listener refuses as foreign;
 * `same-origin` still sends no referrer anywhere else (decision 0060).
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'cache-control': 'no-store',
}

/** Answers `status` with `body` of `type`, the security headers and `headers`. */
export function send(
  response: ServerResponse,
  status: number,
  type: string,
  body: string | Buffer,
  headers: Readonly<Record<string, string | string[]>> = {},
): void {
  if (response.headersSent) {
    response.end()
    return
  }
  response.writeHead(status, {
    ...SECURITY_HEADERS,
    'content-type': type,
    'content-length': String(Buffer.byteLength(body)),
    ...headers,
  })
  response.end(body)
}

/** A JSON answer. */
export function sendJson(response: ServerResponse, status: number, value: unknown): void {
  send(response, status, 'application/json; charset=utf-8', JSON.stringify(value))
}

/** A plain-text answer (a line). */
export function sendText(
  response: ServerResponse,
  status: number,
  message: string,
  headers: Readonly<Record<string, string>> = {},
): void {
  send(response, status, 'text/plain; charset=utf-8', `${message}\n`, headers)
}

/**
 * The request body as text, at most `max` bytes; `undefined` when it is larger (the rest is
 * drained so the connection stays usable).
 */
export async function bodyOf(request: IncomingMessage, max: number): Promise<string | undefined> {
  const chunks: Buffer[] = []
  let size = 0
  let tooLarge = false
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > max) tooLarge = true
    if (!tooLarge) chunks.push(chunk)
  }
  return tooLarge ? undefined : Buffer.concat(chunks).toString('utf8')
}

/** Where a request came from, for the log: its peer address. */
export function peerOf(request: IncomingMessage): string {
  return request.socket.remoteAddress ?? 'a unix socket'
}

/** The token's path for a browser on this machine (loopback, or the unix socket); none for another. */
export function tokenFileFor(request: IncomingMessage, tokenFile: string | undefined): string | undefined {
  const address = request.socket.remoteAddress
  const local = address === undefined || ['127.0.0.1', '::1', '::ffff:127.0.0.1'].includes(address)
  return local ? tokenFile : undefined
}
