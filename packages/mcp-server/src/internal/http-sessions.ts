import { randomUUID } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { type NodeIncomingMessageLike, toWebRequest } from '@modelcontextprotocol/node'
import { isLegacyRequest } from '@modelcontextprotocol/server'
import type { Sessions } from '@toolvisor/tasks'
import type { ToolRegistry } from '@toolvisor/toolbox'
import { createSurface, type McpServerOptions, type McpSurface } from '../server.js'
import { readJsonBody } from './http-body.js'
import { clientOf, peerOf } from './http-log.js'
import { ModernLeg } from './http-modern.js'
import { messageOf } from './result.js'
import { SessionEvents, SessionTransport, SSE_RETRY_MS } from './resumable.js'
import { TaskAnswers } from './tasks.js'
import { namedWorkspace, WORKSPACE_HEADER } from './workspace.js'

/** The header a client names its toolvisor session with (a bridge's `--session NAME`). */
export const SESSION_HEADER = 'x-toolvisor-session'

const SESSION_NAME = /^[A-Za-z0-9._:@-]{1,128}$/

/** One MCP session (`Mcp-Session-Id`) and the toolvisor session it serves. */
interface Connection {
  readonly transport: SessionTransport
  readonly surface: McpSurface
  readonly session: string
}

/** What the table needs: the registry, the server's options, the sessions and the bounds. */
export interface ConnectionsOptions {
  readonly tools: ToolRegistry
  readonly server: McpServerOptions
  readonly sessions: Sessions
  /** The roots a named workspace must lie in, resolved (`workspaceRoots`). */
  readonly workspaces: readonly string[]
  readonly maxBodyBytes: number
  /** The most MCP sessions at once; an initialize past it is answered 503. */
  readonly maxSessions: number
  readonly log: (line: string) => void
}

/**
 * The MCP sessions of one HTTP server, and its 2026-07-28 leg (decision 0109, points 1 and 2). A
 * request with `Mcp-Session-Id` is its 2025 session's (404 when there is none). A POST without it
 * is routed by the SDK's own classifier: a 2026-07-28 request goes to the modern leg, in the
 * toolvisor session `x-toolvisor-session` names (required: refused without it); anything else may
 * initialize a new 2025 session (the SDK's transport refuses anything but `initialize`), whose
 * toolvisor session is the one the client names, else a session of its own. Closing an MCP
 * session (DELETE, shutdown) leaves its toolvisor session open: the client may come back, and the
 * idle sweep ends it.
 */
export class Connections {
  readonly #byId = new Map<string, Connection>()
  readonly #lastSeen = new Map<string, number>()
  readonly #options: ConnectionsOptions
  /** The answers of calls taken as tasks, shared by every MCP session of this server. */
  readonly #answers = new TaskAnswers()
  readonly #modern: ModernLeg

  constructor(options: ConnectionsOptions) {
    this.#options = options
    this.#modern = new ModernLeg({ ...options, answers: this.#answers })
  }

  /** Serves one request of `/mcp`. */
  async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const id = request.headers['mcp-session-id']
    if (typeof id === 'string') {
      const known = this.#byId.get(id)
      if (known === undefined) return notFound(response, id)
      this.#lastSeen.set(known.session, Date.now())
      known.transport.servedAtNegotiated(request)
      const read = await readJsonBody(request, response, this.#options.maxBodyBytes)
      if (read === 'answered') return
      return known.transport.handleRequest(request, response, read?.body)
    }
    // Checked first, so a bridge's first request (a GET) learns of a refused workspace at once.
    const workspace = namedWorkspace(request.headers[WORKSPACE_HEADER], this.#options.workspaces)
    if ('status' in workspace) return jsonError(response, workspace.status, -32600, workspace.message)
    if (request.method !== 'POST') {
      return jsonError(response, 400, -32000, 'Bad Request: no Mcp-Session-Id; initialize with a POST first')
    }
    const named = request.headers[SESSION_HEADER]
    if (named !== undefined && (typeof named !== 'string' || !SESSION_NAME.test(named))) {
      return jsonError(
        response,
        400,
        -32600,
        `${SESSION_HEADER}: not a session name; use 1 to 128 characters of A-Z a-z 0-9 . _ : @ -`,
      )
    }
    const read = await readJsonBody(request, response, this.#options.maxBodyBytes)
    if (read === 'answered') return
    if (
      read !== undefined &&
      !(await isLegacyRequest(await toWebRequest(request as NodeIncomingMessageLike, read.body), read.body))
    ) {
      if (named === undefined) return jsonError(response, 400, -32602, NO_SESSION)
      this.#lastSeen.set(named, Date.now())
      return this.#modern.handle(request, response, read.body, { session: named, cwd: workspace.cwd })
    }
    if (this.#byId.size >= this.#options.maxSessions) {
      return jsonError(
        response,
        503,
        -32000,
        `too many MCP sessions (${this.#options.maxSessions}); end one (DELETE) or wait for an idle one to expire`,
      )
    }
    await this.#initialize(request, response, { named, cwd: workspace.cwd, read })
  }

  /** The toolvisor sessions with an MCP session attached, and when each was last used. */
  activity(): ReadonlyMap<string, number> {
    return this.#lastSeen
  }

  /** Closes the MCP sessions of a toolvisor session (it ended). */
  async detach(session: string): Promise<void> {
    const closing = [...this.#byId.values()].filter((c) => c.session === session)
    await Promise.all(closing.map((c) => c.surface.close()))
    this.#lastSeen.delete(session)
  }

  async #end(session: string): Promise<void> {
    this.#lastSeen.delete(session)
    if (this.#options.sessions.get(session) === undefined) return
    await this.#options.sessions.close(session, 'closed').catch((error: unknown) => {
      this.#options.log(`http: ending session ${session}: ${messageOf(error)}`)
    })
  }

  /** Closes every MCP session and the modern leg's exchanges (the server stops); the toolvisor sessions stay open. */
  async closeAll(): Promise<void> {
    await Promise.all([...[...this.#byId.values()].map((c) => c.surface.close()), this.#modern.close()])
  }

  async #initialize(
    request: IncomingMessage,
    response: ServerResponse,
    how: {
      readonly named: string | undefined
      readonly cwd: string | undefined
      readonly read: { readonly body: unknown } | undefined
    },
  ): Promise<void> {
    const { named, cwd, read } = how
    const { tools, server, sessions, maxBodyBytes, log } = this.#options
    let connection: Connection | undefined
    const transport = new SessionTransport({
      sessionIdGenerator: () => randomUUID(),
      maxRequestBodySize: maxBodyBytes,
      // Resumable streams: a client whose stream broke comes back with Last-Event-ID (SEP-1699).
      eventStore: new SessionEvents(),
      retryInterval: SSE_RETRY_MS,
      onsessioninitialized: (id) => {
        if (connection) this.#byId.set(id, connection)
        log(
          `MCP session ${id} from ${peerOf(request)}: ${clientOf(read?.body)}, in toolvisor session ${session}`,
        )
      },
      // The client ended its MCP session (DELETE): a session it did not name can never be
      // reached again, so it ends too, with what it owns; a named one waits for its client.
      onsessionclosed: () => {
        if (named === undefined) void this.#end(session)
      },
    })
    const session = named ?? `http-${randomUUID()}`
    const surface = createSurface(
      tools,
      {
        ...server,
        sessions,
        sessionId: session,
        keepSession: true,
        origin: 'mcp-http',
        ...(cwd !== undefined ? { cwd } : {}),
      },
      this.#answers,
    )
    connection = { transport, surface, session }
    void surface.closed.then(() => {
      if (transport.sessionId !== undefined) this.#byId.delete(transport.sessionId)
    })
    this.#lastSeen.set(session, Date.now())
    await surface.connect(transport)
    try {
      await transport.handleRequest(request, response, read?.body)
    } catch (error) {
      log(`http: a request failed: ${messageOf(error)}`)
    }
    // Anything but an initialize is refused by the transport: nothing of it is kept.
    if (transport.sessionId === undefined) await surface.close()
  }
}

/** The refusal of a 2026-07-28 request that names no session (decision 0109, point 2). */
const NO_SESSION = `${SESSION_HEADER}: required of a 2026-07-28 client, which has no MCP session: name the toolvisor session every request of this client runs in (1 to 128 characters of A-Z a-z 0-9 . _ : @ -), e.g. in the client's configuration of headers; a 2025-11-25 client may leave it out`

function notFound(response: ServerResponse, id: string): void {
  jsonError(
    response,
    404,
    -32001,
    `Session not found: ${JSON.stringify(id.slice(0, 100))} (it ended, or the server restarted); initialize again`,
  )
}

/** A JSON-RPC error as a plain HTTP answer (no request id is known). */
export function jsonError(response: ServerResponse, status: number, code: number, message: string): void {
  if (response.headersSent) return void response.end()
  response.writeHead(status, { 'content-type': 'application/json' })
  response.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }))
}
