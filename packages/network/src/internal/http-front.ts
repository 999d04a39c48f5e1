import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http'
import type { Socket } from 'node:net'
import type { Refusal, RefusalKind } from './admission.js'
import type { Client } from './client.js'
import { handOff } from './handoff.js'
import { hostPort, splitAuthority } from './host.js'
import { splice } from './splice.js'

/** The cap on a request line and its headers together. */
export const MAX_HEAD_BYTES = 16 * 1024

const STATUS_OF: Record<RefusalKind, readonly [number, string]> = {
  policy: [403, 'Forbidden'],
  unresolved: [502, 'Bad Gateway'],
  refused: [502, 'Bad Gateway'],
  timeout: [504, 'Gateway Timeout'],
}

/** Headers of one hop only (RFC 9110 §7.6.1), never forwarded, plus the proxy's own. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
])

/** The body of a refusal: one line a program shows as it is. */
function refusalText(refusal: Refusal): string {
  return `toolvisor: blocked ${hostPort(refusal.host, refusal.port)}, ${refusal.reason}\n`
}

/** A whole response on a raw socket (a CONNECT's answer, a parse error's), ending the connection. */
function rawResponse(
  status: number,
  statusText: string,
  body: string,
  extra: readonly string[] = [],
): string {
  return [
    `HTTP/1.1 ${status} ${statusText}`,
    'Content-Type: text/plain; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    ...extra,
    '',
    body,
  ].join('\r\n')
}

function refusalResponse(refusal: Refusal): string {
  const [status, text] = STATUS_OF[refusal.kind]
  return rawResponse(status, text, refusalText(refusal), [`X-Toolvisor-Denied: ${refusal.reason}`])
}

function answerText(
  res: ServerResponse,
  status: number,
  body: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    ...headers,
  })
  res.end(body)
}

/** `rawHeaders` without the hop-by-hop ones and those `Connection` names, and without `skip`. */
function endToEnd(rawHeaders: readonly string[], skip: ReadonlySet<string>): string[] {
  const named = new Set<string>()
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.toLowerCase() !== 'connection') continue
    for (const token of rawHeaders[i + 1]!.split(',')) named.add(token.trim().toLowerCase())
  }
  const kept: string[] = []
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!.toLowerCase()
    if (HOP_BY_HOP.has(name) || named.has(name) || skip.has(name)) continue
    kept.push(rawHeaders[i]!, rawHeaders[i + 1]!)
  }
  return kept
}

/** Set by the proxy itself on a forwarded request; the client's `Expect` was answered by this server already. */
const REQUEST_SKIP = new Set(['host', 'expect'])
const RESPONSE_SKIP = new Set<string>()

/** The URL of an absolute-form request, or what to tell a client that sent something else. */
function absoluteUrl(target: string): URL | string {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(target)
  if (scheme === null) {
    return 'toolvisor: this is a proxy; ask for an absolute URL (GET http://host/path) or CONNECT host:port\n'
  }
  if (scheme[1]!.toLowerCase() !== 'http') {
    return `toolvisor: only http:// URLs are forwarded; for ${scheme[1]}:// use CONNECT host:port (HTTPS_PROXY does)\n`
  }
  try {
    return new URL(target)
  } catch {
    return `toolvisor: ${JSON.stringify(target.slice(0, 200))} is not a URL\n`
  }
}

/** What the front needs of its gate. */
export interface FrontOptions {
  /** The client of an accepted socket. */
  readonly clientOf: (socket: Socket) => Client | undefined
}

/**
 * A `node:http` server that never listens: the gate hands it each connection whose first byte is
 * not SOCKS5. It answers CONNECT with a tunnel, forwards absolute-form requests, keeps the client's
 * connection alive between them (each request decided anew: a client may change host on the same
 * connection), and answers bad requests with a text reason before closing that connection only.
 */
export function httpFront(options: FrontOptions): Server {
  const server = createServer({ maxHeaderSize: MAX_HEAD_BYTES, requireHostHeader: false })
  // A client that shuts its sending side after a request (`printf ... | nc -N`) still gets the
  // answer; Node's default would drop the request at the client's end.
  Object.assign(server, { httpAllowHalfOpen: true })
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const client = options.clientOf(req.socket)
    if (client === undefined) return void req.socket.destroy()
    void forward(client, req, res)
  })
  server.on('connect', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    const client = options.clientOf(socket)
    if (client === undefined) return void socket.destroy()
    void tunnel(client, req, head)
  })
  server.on('upgrade', (_req: IncomingMessage, socket: Socket) => {
    const body = 'toolvisor: protocol upgrades are not forwarded; use CONNECT host:port\n'
    options.clientOf(socket)?.finish(rawResponse(400, 'Bad Request', body))
  })
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    const client = options.clientOf(socket)
    if (client === undefined || client.answering > 0 || !socket.writable) return void socket.destroy()
    if (error.code === 'HPE_HEADER_OVERFLOW') {
      const body = `toolvisor: the request line and headers are over ${MAX_HEAD_BYTES} bytes\n`
      return client.finish(rawResponse(431, 'Request Header Fields Too Large', body))
    }
    client.finish(
      rawResponse(
        400,
        'Bad Request',
        `toolvisor: not an HTTP or SOCKS5 request (${error.code ?? error.message})\n`,
      ),
    )
  })
  return server
}

async function tunnel(client: Client, req: IncomingMessage, head: Buffer): Promise<void> {
  client.requested()
  const { socket } = client
  socket.setTimeout(0)
  const authority = splitAuthority(req.url ?? '')
  if (authority === undefined) {
    const body = `toolvisor: CONNECT takes host:port, not ${JSON.stringify((req.url ?? '').slice(0, 200))}\n`
    return client.finish(rawResponse(400, 'Bad Request', body))
  }
  // The bridge carries the tunnel when the connection is its own and the proxy has sent nothing
  // on it yet (the bridge looks at the first bytes only); else this process does.
  if (client.fromBridge && socket.bytesWritten === 0 && client.answering === 0) {
    const cleared = await client.clear(authority)
    if (cleared === undefined) return void socket.destroy()
    if (!cleared.ok) return client.finish(refusalResponse(cleared))
    return handOff(client, cleared, head, (refusal) => client.finish(refusalResponse(refusal)))
  }
  const admitted = await client.admit(authority)
  if (admitted === undefined) return void socket.destroy()
  if (!admitted.ok) return client.finish(refusalResponse(admitted))
  socket.write('HTTP/1.1 200 Connection Established\r\n\r\n')
  if (head.length > 0) admitted.socket.write(head)
  splice(socket, admitted.socket)
}

/**
 * Forwards one absolute-form request in origin form on a connection of its own to the target
 * (`Connection: close`: one request, one connection, each counted), with the hop-by-hop headers
 * removed and `Host` set from the URL that was checked, never the client's (a different `Host` on
 * a shared server would reach a site the rules did not allow). Bodies stream both ways with
 * backpressure; nothing is buffered whole.
 */
async function forward(client: Client, req: IncomingMessage, res: ServerResponse): Promise<void> {
  client.requested()
  client.answering++
  res.once('close', () => client.answering--)
  // Errors end the response (and the connection) below; unheard, one would end the process.
  res.on('error', () => {})
  const url = absoluteUrl(req.url ?? '')
  if (typeof url === 'string') return answerText(res, 400, url)
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname
  const admitted = await client.admit({ host, port: url.port === '' ? 80 : Number(url.port) })
  if (admitted === undefined) return void res.destroy()
  if (!admitted.ok) {
    const [status] = STATUS_OF[admitted.kind]
    return answerText(res, status, refusalText(admitted), { 'X-Toolvisor-Denied': admitted.reason })
  }
  const upstream = admitted.socket
  const headers = endToEnd(req.rawHeaders, REQUEST_SKIP)
  headers.push('Host', url.host, 'Connection', 'close')
  if (req.headers['transfer-encoding'] !== undefined) headers.push('Transfer-Encoding', 'chunked')
  const outgoing = httpRequest({
    createConnection: () => upstream,
    method: req.method ?? 'GET',
    path: `${url.pathname}${url.search}`,
    headers,
    setHost: false,
  })
  res.once('close', () => {
    if (!res.writableFinished) outgoing.destroy()
  })
  outgoing.once('error', () => {
    if (res.writableFinished) return
    if (!res.headersSent) {
      const body = `toolvisor: ${admitted.key} closed the connection before answering\n`
      return answerText(res, 502, body)
    }
    res.destroy()
  })
  outgoing.once('response', (incoming) => {
    try {
      res.writeHead(
        incoming.statusCode ?? 502,
        incoming.statusMessage,
        endToEnd(incoming.rawHeaders, RESPONSE_SKIP),
      )
    } catch {
      outgoing.destroy()
      return answerText(
        res,
        502,
        `toolvisor: ${admitted.key} answered with headers that cannot be forwarded\n`,
      )
    }
    incoming.pipe(res)
    incoming.once('close', () => {
      if (!incoming.complete) res.destroy()
    })
  })
  req.pipe(outgoing)
}
