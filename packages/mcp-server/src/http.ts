import { chmodSync, rmSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Sessions } from '@toolvisor/tasks'
import type { ToolRegistry } from '@toolvisor/toolbox'
import { McpServerError } from './errors.js'
import { bearerRefusal, type Guard, originRefusal, type Refusal } from './internal/http-guard.js'
import { RefusalLog } from './internal/http-log.js'
import { Connections, jsonError } from './internal/http-sessions.js'
import { messageOf } from './internal/result.js'
import { stderrLog } from './internal/stderr-log.js'
import { workspaceRoots } from './internal/workspace.js'
import type { McpServerOptions } from './server.js'

/** Where `serveHttp` listens: a TCP host and port (0: any free port), or a unix socket path. */
export type Listen = { readonly host: string; readonly port: number } | { readonly path: string }

/** `serveHttp` options: the server's (less what each session sets), plus the listener's. */
export interface ServeHttpOptions
  extends Omit<McpServerOptions, 'sessionId' | 'keepSession' | 'origin' | 'sessions' | 'cwd'> {
  readonly listen: Listen
  /** The bearer token every request must carry. */
  readonly token: string
  /** Origins a browser page may call from, besides the listener's own (`http://HOST:PORT`). */
  readonly allowedOrigins?: readonly string[]
  /** The sessions service: one toolvisor session per client, kept across its reconnects. */
  readonly sessions: Sessions
  /** Whether a session owns something still running: such a session never expires. */
  readonly ownsRunning?: (session: string) => boolean
  /** How long a session may be idle (no request) before it ends, unless it owns running processes. Default 15 min. */
  readonly sessionTtlMs?: number
  /**
   * The directories a client may name as its session's workspace (`x-toolvisor-workspace`, a
   * bridge's `--workspace`): the named one must be one of them or inside one, symlinks resolved;
   * anything else is refused (403) before a session exists. Absent or empty: no client may name
   * one, and every session works in the server's default.
   */
  readonly workspaces?: readonly string[]
  /** The largest request body, in bytes (a larger one is answered 413). Default 4 MiB. */
  readonly maxBodyBytes?: number
  /** The most MCP sessions at once (an initialize past it is answered 503). Default 1024. */
  readonly maxSessions?: number
  /** How long a client may take to send its headers, and its whole request. Defaults 10 s and 60 s. */
  readonly headersTimeoutMs?: number
  readonly requestTimeoutMs?: number
  /**
   * Other routes of the same listener (the operator page), by path prefix. A foreign Origin is
   * refused before them; the bearer token is not required: each route is told whether the request
   * carried it, and answers 401 itself when its own credentials (a page's cookie) are missing too.
   */
  readonly routes?: ReadonlyMap<string, Route>
}

/** A route besides `/mcp`; `bearer`: the request carried the token. */
export type Route = (
  request: IncomingMessage,
  response: ServerResponse,
  bearer: boolean,
) => void | Promise<void>

/** A running HTTP server. */
export interface HttpSurface {
  /** `http://127.0.0.1:PORT/mcp`, or `unix:PATH`. */
  readonly url: string
  /** Stops accepting, closes every MCP session (their toolvisor sessions stay open), resolves when done. */
  close(): Promise<void>
}

const DEFAULT_TTL_MS = 15 * 60_000
const DEFAULT_BODY_BYTES = 4 * 1024 * 1024

/**
 * Serves the registry over MCP's Streamable HTTP transport at `/mcp`: every request needs the
 * bearer token (compared in constant time) and, when it carries an `Origin`, an allowed one;
 * anything else is refused (401, 403) before it is read. Each MCP session serves one toolvisor
 * session, kept when the client goes away, so a client that comes back finds its processes; an
 * idle session ends after `sessionTtlMs` unless it owns running processes.
 *
 * @example
 * ```ts
 * const http = await serveHttp(tools, { name: 'toolvisor', version, listen: { host: '127.0.0.1', port: 8765 }, token, sessions })
 * // ... later
 * await http.close()
 * ```
 */
export async function serveHttp(tools: ToolRegistry, options: ServeHttpOptions): Promise<HttpSurface> {
  if (options.token.length < 16) {
    throw new McpServerError(
      'MCP_ERR_INVALID_OPTIONS',
      'serveHttp: options.token: must be at least 16 characters',
    )
  }
  const log = options.log ?? stderrLog
  const {
    listen,
    token,
    sessions,
    routes,
    ownsRunning: _o,
    allowedOrigins: extra = [],
    headersTimeoutMs: _h,
    requestTimeoutMs: _r,
    workspaces,
    ...server
  } = options
  const connections = new Connections({
    tools,
    server,
    sessions,
    workspaces: checkedRoots(workspaces),
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_BODY_BYTES,
    maxSessions: options.maxSessions ?? 1024,
    log: (line) => log(`${options.name}: ${line}`),
  })
  const origins: string[] = [...extra]
  const hosts: string[] = []
  const guard: Guard = { token, allowedOrigins: origins, allowedHosts: hosts }
  // A client that sends a wrong token (an unexpanded `${VAR}`) is said on stderr, rate-limited.
  const refusals = new RefusalLog((line) => log(`${options.name}: ${line}`))
  const http = listener(
    options,
    (request, response) => route(request, response, { guard, connections, routes, refusals }),
    log,
  )
  const url = await listenOn(http, listen)
  if ('host' in listen) {
    const own = ownOrigins(http)
    origins.push(...own)
    // On loopback the Host is known; beyond it (--allow-remote) any name may reach the machine.
    if (isLoopback(http)) hosts.push(...own.map((origin) => new URL(origin).host))
  }
  const sweep = sweepIdle(connections, options, log)
  return {
    url,
    async close() {
      clearInterval(sweep)
      const closed = new Promise<void>((resolve) => http.close(() => resolve()))
      await connections.closeAll()
      http.closeAllConnections()
      await closed
      if ('path' in listen) rmSync(listen.path, { force: true })
    },
  }
}

/** The node HTTP server: bounded headers, bodies and connections; a failed route is a 500. */
function listener(
  options: ServeHttpOptions,
  handle: (request: IncomingMessage, response: ServerResponse) => Promise<void>,
  log: (line: string) => void,
): Server {
  const headersTimeout = options.headersTimeoutMs ?? 10_000
  const requestTimeout = Math.max(options.requestTimeoutMs ?? 60_000, headersTimeout)
  // Slow requests are checked for every second (Node's default is every 30 s).
  const http = createServer(
    { headersTimeout, requestTimeout, connectionsCheckingInterval: 1000 },
    (request, response) => {
      void handle(request, response).catch((error: unknown) => {
        log(`${options.name}: http: ${messageOf(error)}`)
        jsonError(response, 500, -32603, 'Internal error')
      })
    },
  )
  // A flood of connections is refused past this many.
  http.maxConnections = 1024
  return http
}

async function route(
  request: IncomingMessage,
  response: ServerResponse,
  context: {
    guard: Guard
    connections: Connections
    routes: ServeHttpOptions['routes']
    refusals: RefusalLog
  },
): Promise<void> {
  const refuse = (refusal: Refusal) => {
    context.refusals.note(request, refusal)
    refused(request, response, refusal)
  }
  const foreign = originRefusal(request, context.guard)
  if (foreign) return refuse(foreign)
  const bearer = bearerRefusal(request, context.guard)
  const path = new URL(request.url ?? '/', 'http://localhost').pathname
  const other = [...(context.routes ?? [])].find(
    ([prefix]) => path === prefix || path.startsWith(`${prefix}/`),
  )
  if (other) return other[1](request, response, bearer === undefined)
  if (bearer) return refuse(bearer)
  if (path === '/mcp') return context.connections.handle(request, response)
  request.resume()
  response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' })
  response.end('not found: MCP is served at /mcp\n')
}

function refused(request: IncomingMessage, response: ServerResponse, refusal: Refusal): void {
  request.resume()
  response.writeHead(refusal.status, { 'content-type': 'text/plain; charset=utf-8', ...refusal.headers })
  response.end(`${refusal.message}\n`)
}

async function listenOn(http: Server, listen: Listen): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject)
    if ('path' in listen) {
      rmSync(listen.path, { force: true })
      http.listen(listen.path, () => resolve())
    } else http.listen(listen.port, listen.host, () => resolve())
  })
  if ('path' in listen) {
    chmodSync(listen.path, 0o600)
    return `unix:${listen.path}`
  }
  const address = http.address() as AddressInfo
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address
  return `http://${host}:${address.port}/mcp`
}

/** The origins of the listener itself (`http://127.0.0.1:PORT`, `http://localhost:PORT` on loopback). */
function ownOrigins(http: Server): string[] {
  const { address, port, family } = http.address() as AddressInfo
  const host = family === 'IPv6' ? `[${address}]` : address
  return [`http://${host}:${port}`, ...(isLoopback(http) ? [`http://localhost:${port}`] : [])]
}

function isLoopback(http: Server): boolean {
  const { address } = http.address() as AddressInfo
  return address === '127.0.0.1' || address === '::1'
}

/** Ends the sessions idle for longer than `ttlMs` that own nothing running. */
async function expireIdle(
  connections: Connections,
  sessions: Sessions,
  ownsRunning: ServeHttpOptions['ownsRunning'],
  ttlMs: number,
  log: (line: string) => void,
): Promise<void> {
  const now = Date.now()
  for (const [session, seen] of [...connections.activity()]) {
    if (now - seen < ttlMs || ownsRunning?.(session)) continue
    await connections.detach(session)
    if (sessions.get(session) === undefined) continue
    try {
      await sessions.close(session, 'expired')
      log(`toolvisor: session ${session} ended after ${Math.round(ttlMs / 1000)} s idle`)
    } catch (error) {
      log(`toolvisor: ending session ${session}: ${messageOf(error)}`)
    }
  }
}

/** The workspace roots, resolved; throws `MCP_ERR_INVALID_OPTIONS` naming one that cannot be a root. */
function checkedRoots(workspaces: readonly string[] | undefined): readonly string[] {
  const roots = workspaceRoots(workspaces)
  if (typeof roots === 'string') {
    throw new McpServerError('MCP_ERR_INVALID_OPTIONS', `serveHttp: options.workspaces: ${roots}`)
  }
  return roots
}

/** The idle sweep: every minute (or TTL, when shorter), ends the sessions idle past the TTL. */
function sweepIdle(
  connections: Connections,
  options: ServeHttpOptions,
  log: (line: string) => void,
): NodeJS.Timeout {
  const ttl = options.sessionTtlMs ?? DEFAULT_TTL_MS
  const sweep = setInterval(
    () => void expireIdle(connections, options.sessions, options.ownsRunning, ttl, log),
    Math.min(60_000, ttl),
  )
  sweep.unref()
  return sweep
}
