import { request as httpRequest } from 'node:http'
import type { Readable as NodeReadable, Writable } from 'node:stream'
import { Readable } from 'node:stream'
import {
  type CallToolResult,
  Client,
  type JSONRPCMessage,
  type Progress,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client'
import { McpServerError } from './errors.js'
import { SESSION_HEADER } from './internal/http-sessions.js'
import { messageOf } from './internal/result.js'
import { stderrLog } from './internal/stderr-log.js'
import { StdioTransport } from './internal/stdio-transport.js'
import { WORKSPACE_HEADER } from './internal/workspace.js'
import { MCP_DEFAULT_LIMITS } from './limits.js'

/** Where the daemon listens: its `/mcp` URL, or its unix socket. */
export type Upstream = { readonly url: string } | { readonly socket: string }

/** How `bridgeStdio` forwards. */
export interface BridgeOptions {
  readonly upstream: Upstream
  readonly token: string
  /** The toolvisor session every turn of this client shares (`--session NAME`). */
  readonly session: string
  /**
   * The session's workspace (`--workspace DIR`, absolute): sent with every request; the daemon
   * takes it when it lies in one of its `workspaces`, else refuses the bridge at once.
   */
  readonly workspace?: string
  readonly stdin?: NodeReadable
  readonly stdout?: Writable
  readonly log?: (line: string) => void
  readonly signal?: AbortSignal
}

/**
 * A stdio MCP server with no process management of its own: every message goes to `toolvisor
 * serve` under the session `session`, every answer and notification comes back. Clients that start
 * a fresh server each turn (over stdio) get the daemon's persistence: two bridges, one after the
 * other, with the same session see the same processes, tasks and mail. Resolves when the client
 * closes stdin (or `signal` aborts); rejects at once, saying why, when the daemon cannot be reached
 * or refuses the token.
 */
export async function bridgeStdio(options: BridgeOptions): Promise<void> {
  const log = options.log ?? stderrLog
  const { url, headers, fetcher } = upstreamOf(options)
  await reach(url, headers, fetcher, options.upstream)
  const upstream = new StreamableHTTPClientTransport(url, { fetch: fetcher, requestInit: { headers } })
  const downstream = new StdioTransport({
    stdin: options.stdin ?? process.stdin,
    stdout: options.stdout ?? process.stdout,
    maxMessageBytes: MCP_DEFAULT_LIMITS.maxMessageBytes,
    maxQueuedBytes: MCP_DEFAULT_LIMITS.maxQueuedBytes,
    log: (line) => log(`toolvisor bridge: ${line}`),
  })
  const ended = new Promise<void>((resolve) => {
    downstream.onclose = resolve
    options.signal?.addEventListener('abort', () => resolve(), { once: true })
  })
  downstream.onmessage = (message) => void forward(message, upstream, downstream, log)
  upstream.onmessage = (message) => void downstream.send(message).catch(() => {})
  upstream.onerror = (error) => log(`toolvisor bridge: the daemon: ${messageOf(error)}`)
  await upstream.start()
  await downstream.start()
  await ended
  // The MCP session ends with the turn; the toolvisor session and what it owns stay with the daemon.
  await upstream.terminateSession().catch(() => {})
  await upstream.close()
  await downstream.close()
}

/** Where and as whom `callUpstream` calls: the daemon, its token, the session (and its workspace). */
export type UpstreamSession = Pick<BridgeOptions, 'upstream' | 'token' | 'session' | 'workspace'>

/**
 * One tool call in a running `toolvisor serve`, in the session `session`, as an MCP client makes it:
 * what it starts stays with the daemon, in that session (a service, a stream task), for the next
 * call to read, send to or stop. `progress` hears each progress notification. Rejects at once,
 * saying why, when the daemon cannot be reached or refuses the token (`MCP_ERR_UPSTREAM`).
 */
export async function callUpstream(
  to: UpstreamSession,
  call: { readonly name: string; readonly arguments: Record<string, unknown> },
  options: {
    readonly signal?: AbortSignal
    readonly progress?: (progress: number, message?: string) => void
  } = {},
): Promise<CallToolResult> {
  const { url, headers, fetcher } = upstreamOf(to)
  await reach(url, headers, fetcher, to.upstream)
  const client = new Client({ name: 'toolvisor call', version: '1' })
  const transport = new StreamableHTTPClientTransport(url, { fetch: fetcher, requestInit: { headers } })
  await client.connect(transport)
  try {
    const progress = options.progress
    return (await client.callTool(call, {
      ...(options.signal ? { signal: options.signal } : {}),
      ...(progress
        ? { onprogress: (p: Progress) => progress(p.progress, p.message), resetTimeoutOnProgress: true }
        : {}),
      timeout: 24 * 60 * 60 * 1000,
    })) as CallToolResult
  } finally {
    // The MCP session ends with the call (the daemon holds no idle one per call); the toolvisor
    // session, named, stays with what it owns.
    await transport.terminateSession().catch(() => {})
    await client.close().catch(() => {})
  }
}

/** The daemon's URL, the headers every request carries, and the fetch that reaches it. */
function upstreamOf(to: UpstreamSession) {
  const url = 'url' in to.upstream ? new URL(to.upstream.url) : new URL('http://toolvisor/mcp')
  const fetcher = 'socket' in to.upstream ? unixFetch(to.upstream.socket) : fetch
  const headers: Record<string, string> = {
    authorization: `Bearer ${to.token}`,
    [SESSION_HEADER]: to.session,
    ...(to.workspace !== undefined ? { [WORKSPACE_HEADER]: to.workspace } : {}),
  }
  return { url, headers, fetcher }
}

/** Sends one message upstream; a request that cannot be delivered is answered with an error. */
async function forward(
  message: JSONRPCMessage,
  upstream: StreamableHTTPClientTransport,
  downstream: StdioTransport,
  log: (line: string) => void,
): Promise<void> {
  try {
    await upstream.send(message)
  } catch (error) {
    log(`toolvisor bridge: forwarding failed: ${messageOf(error)}`)
    if ('id' in message && 'method' in message) {
      await downstream
        .send({
          jsonrpc: '2.0',
          id: message.id,
          error: { code: -32603, message: `toolvisor serve did not take the request: ${messageOf(error)}` },
        })
        .catch(() => {})
    }
  }
}

/** Fails fast, saying why, when the daemon is not there or refuses the token. */
async function reach(
  url: URL,
  headers: Record<string, string>,
  fetcher: typeof fetch,
  upstream: Upstream,
): Promise<void> {
  const where = 'url' in upstream ? upstream.url : `unix:${upstream.socket}`
  let status: number
  let refused: string | undefined
  try {
    const answer = await fetcher(url, { method: 'GET', headers })
    status = answer.status
    if (status === 400 || status === 403) refused = workspaceRefusal(await answer.text().catch(() => ''))
    else await answer.body?.cancel()
  } catch (error) {
    // undici says "fetch failed"; its cause says why (ECONNREFUSED, ENOENT, "bad port").
    const inner = (error as { cause?: { code?: string; message?: string } }).cause
    const cause = inner?.code ?? inner?.message ?? messageOf(error)
    throw new McpServerError(
      'MCP_ERR_UPSTREAM',
      `cannot reach toolvisor serve at ${where}: ${cause}; is it running?`,
    )
  }
  if (status === 401)
    throw new McpServerError(
      'MCP_ERR_UPSTREAM',
      `toolvisor serve at ${where} refused the token (401): check --token-file`,
    )
  if (refused !== undefined) {
    throw new McpServerError(
      'MCP_ERR_UPSTREAM',
      `toolvisor serve at ${where} refused the workspace: ${refused}`,
    )
  }
  if (status === 403 || status === 404) {
    throw new McpServerError(
      'MCP_ERR_UPSTREAM',
      `${where} answered ${status}: is it toolvisor serve, at its /mcp?`,
    )
  }
}

/** The daemon's refusal of a named workspace, from its JSON-RPC error body; else undefined. */
function workspaceRefusal(body: string): string | undefined {
  try {
    const message = (JSON.parse(body) as { error?: { message?: unknown } }).error?.message
    return typeof message === 'string' && message.startsWith(WORKSPACE_HEADER) ? message : undefined
  } catch {
    return undefined
  }
}

/** `fetch` over a unix socket (Node's own fetch reaches only TCP). */
export function unixFetch(socketPath: string): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init)
    const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined
    const url = new URL(request.url)
    return new Promise<Response>((resolve, reject) => {
      const outgoing = httpRequest(
        {
          socketPath,
          path: `${url.pathname}${url.search}`,
          method: request.method,
          headers: Object.fromEntries(request.headers),
        },
        (incoming) => {
          const headers = new Headers()
          for (const [name, value] of Object.entries(incoming.headers)) {
            if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value)
          }
          const stream = [204, 304].includes(incoming.statusCode ?? 0)
            ? null
            : (Readable.toWeb(incoming) as ReadableStream)
          resolve(new Response(stream, { status: incoming.statusCode ?? 500, headers }))
        },
      )
      outgoing.on('error', reject)
      request.signal.addEventListener('abort', () => outgoing.destroy(new Error('aborted')), { once: true })
      outgoing.end(body)
    })
  }) as typeof fetch
}
