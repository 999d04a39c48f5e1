import type { IncomingMessage, ServerResponse } from 'node:http'
import {
  type NodeIncomingMessageLike,
  type NodeMcpRequestHandler,
  toNodeHandler,
} from '@modelcontextprotocol/node'
import {
  type AuthInfo,
  createMcpHandler,
  type McpHttpHandler,
  type McpRequestContext,
} from '@modelcontextprotocol/server'
import type { Sessions } from '@toolvisor/tasks'
import type { ToolRegistry } from '@toolvisor/toolbox'
import type { McpServerOptions } from '../server.js'
import { ToolAnnouncer } from './announcer.js'
import { connectionServer } from './connection.js'
import { requestSession, SessionBus } from './http-bus.js'
import { watchMail } from './mail.js'
import { MAIL_URI } from './mail-resource.js'
import { messageOf } from './result.js'
import type { TaskAnswers } from './tasks.js'

/** Who a 2026-07-28 request is, once checked: the toolvisor session it names, and its workspace. */
export interface ModernPrincipal {
  readonly session: string
  readonly cwd: string | undefined
}

/** What the modern leg serves with: the registry, the server's options, the sessions, the log. */
export interface ModernLegOptions {
  readonly tools: ToolRegistry
  readonly server: McpServerOptions
  readonly sessions: Sessions
  readonly answers: TaskAnswers
  readonly maxBodyBytes: number
  readonly log: (line: string) => void
}

/** The principal travels to the factory as the request's `authInfo`, which the SDK passes through. */
const PRINCIPAL_SCOPE = 'toolvisor-session'

/**
 * The 2026-07-28 leg of `/mcp` (decision 0109, points 1 and 2): the SDK's `createMcpHandler` with
 * no 2025 serving (that is the sessionful leg's), a server built per request for the session the
 * request names, and `tools/list_changed` published to every listen subscription when the
 * registry changes. A request reaches it only with its token, Host, Origin and session checked.
 */
export class ModernLeg {
  readonly #handler: McpHttpHandler
  readonly #node: NodeMcpRequestHandler
  readonly #unwatch: (() => void) | undefined
  readonly #bus: SessionBus
  #flush: NodeJS.Immediate | undefined

  constructor(private readonly options: ModernLegOptions) {
    const { mailbox, readBack } = options.server
    this.#bus = new SessionBus(
      mailbox &&
        ((session, tell) =>
          watchMail(mailbox, session, () => tell({ kind: 'resource_updated', uri: MAIL_URI }), readBack)),
    )
    this.#handler = createMcpHandler((ctx) => this.#build(ctx), {
      legacy: 'reject',
      bus: this.#bus,
      maxRequestBodySize: options.maxBodyBytes,
      onerror: (error) => options.log(`http: ${messageOf(error)}`),
    })
    this.#node = toNodeHandler(this.#handler, {
      maxRequestBodySize: options.maxBodyBytes,
      onerror: (error) => options.log(`http: ${messageOf(error)}`),
    })
    // A change in one turn (a toolbox registering its tools) is published once.
    this.#unwatch = ToolAnnouncer.canAnnounce(options.tools)
      ? options.tools.onChange?.(() => {
          this.#flush ??= setImmediate(() => {
            this.#flush = undefined
            this.#handler.notify.toolsChanged()
          })
        })
      : undefined
  }

  /** Serves one request of `principal`, whose JSON body was read already. */
  handle(
    request: IncomingMessage,
    response: ServerResponse,
    body: unknown,
    principal: ModernPrincipal,
  ): Promise<void> {
    const auth: AuthInfo = {
      token: '',
      clientId: principal.session,
      scopes: [PRINCIPAL_SCOPE],
      extra: principal.cwd !== undefined ? { cwd: principal.cwd } : {},
    }
    Object.assign(request, { auth })
    // A request of node's server always has its method: the SDK's type only says so. Run in the
    // request's session, so the listen stream it may open hears its own session's mail only.
    return requestSession.run(principal.session, () =>
      this.#node(request as NodeIncomingMessageLike, response, body),
    )
  }

  /** Aborts the exchanges in flight and stops watching the registry. */
  async close(): Promise<void> {
    this.#unwatch?.()
    if (this.#flush) clearImmediate(this.#flush)
    await this.#handler.close()
  }

  /** The server of one request: its session's, with what it brings (mail folded, approvals' rounds). */
  #build(ctx: McpRequestContext) {
    const auth = ctx.authInfo
    // Only `handle` reaches the handler, and it always sets the principal: anything else is a bug.
    if (auth === undefined || !auth.scopes.includes(PRINCIPAL_SCOPE)) {
      throw new Error('a 2026-07-28 request reached the handler without its checked session')
    }
    const cwd = typeof auth.extra?.cwd === 'string' ? auth.extra.cwd : undefined
    const { tools, server, sessions, answers } = this.options
    const instance = connectionServer(
      tools,
      {
        ...server,
        sessions,
        sessionId: auth.clientId,
        keepSession: true,
        origin: 'mcp-http',
        ...(cwd !== undefined ? { cwd } : {}),
      },
      answers,
      'modern',
    )
    instance.server.onclose = () => instance.stop()
    // The operator hears of a session once, when its first request opens it, and in which revision.
    if (sessions.get(auth.clientId) === undefined) {
      this.options.log(
        `session ${auth.clientId} opened by a 2026-07-28 client (${tools.list().length} tools)`,
      )
    }
    instance.start({ quiet: true, announce: false })
    return instance.server
  }
}
