/**
 * The `approval` seam over MCP: the user of a connection is asked through elicitation
 * (`elicitation/create`), when the client declared the capability and speaks 2025-11-25 or before;
 * otherwise (a 2026-07-28 client included, until its `input_required` round is served) the answer
 * is `unavailable`, and the tool that asked fails closed.
 */
import type { Server } from '@modelcontextprotocol/server'
import { definePlugin } from '@toolvisor/kernel'
import {
  type Approval,
  type ApprovalOutcome,
  type ApprovalRequest,
  ApprovalToken,
  type ConnectionId,
} from '@toolvisor/toolbox'
import { approvalMessage } from './internal/approval-message.js'
import { speaksModern } from './internal/era.js'

export { APPROVAL_FOOTER, approvalMessage, JUSTIFICATION_CHARACTERS } from './internal/approval-message.js'

/** How long a question waits for the user before it counts as cancelled. Default 10 minutes. */
const ASK_TIMEOUT_MS = 600_000

/** One MCP connection that can be asked: its identity, its session and its SDK server. */
export interface ApprovalConnection {
  /** The connection's identity (`McpSurface.connection`): what requests are routed by. */
  readonly connection: ConnectionId
  /** Its toolvisor session: a request naming another session is not asked here. */
  readonly sessionId: string
  /** The SDK server of the connection, which asks through `elicitation/create`. */
  readonly server: Server
}

/**
 * The approvals of every MCP connection of a toolvisor, by connection: each connection attaches
 * its SDK server while it is connected (`createMcpServer`'s `approvals` option), and a request goes
 * to the connection that made the call (`request.connection`), never to another connection of the
 * same session name (a second client of a `serve` session must not answer the first one's
 * questions). A request without a connection, or whose connection is gone, is `unavailable`.
 */
export class McpApprovals implements Approval {
  readonly #connections = new Map<ConnectionId, ApprovalConnection>()
  readonly #timeoutMs: number

  constructor(options: { readonly timeoutMs?: number } = {}) {
    this.#timeoutMs = options.timeoutMs ?? ASK_TIMEOUT_MS
  }

  /** Routes the questions of calls made on `connection` to its server until the returned detach is called. */
  attach(connection: ApprovalConnection): () => void {
    this.#connections.set(connection.connection, connection)
    return () => {
      if (this.#connections.get(connection.connection) === connection)
        this.#connections.delete(connection.connection)
    }
  }

  async request(request: ApprovalRequest): Promise<ApprovalOutcome> {
    const attached = request.connection === undefined ? undefined : this.#connections.get(request.connection)
    // A connection answers for its own session only: a request naming another is a bug, refused.
    if (attached === undefined || attached.sessionId !== request.sessionId) return 'unavailable'
    const { server } = attached
    // A 2026-07-28 client is asked by an `input_required` round (decision 0109, point 3), which is
    // not served yet: its escalations fail closed. A 2025 client is asked when it can be.
    if (speaksModern(server) || server.getClientCapabilities()?.elicitation === undefined)
      return 'unavailable'
    if (request.signal.aborted) return 'cancelled'
    try {
      const answer = await server.elicitInput(
        {
          mode: 'form',
          message: approvalMessage(request),
          requestedSchema: { type: 'object', properties: {} },
        },
        { signal: request.signal, timeout: this.#timeoutMs },
      )
      if (answer.action === 'accept') return 'allowed-once'
      return answer.action === 'decline' ? 'rejected' : 'cancelled'
    } catch {
      // Aborted or timed out while the user had it: dismissed. Any other failure: no way to ask.
      return request.signal.aborted || server.transport === undefined ? 'cancelled' : 'unavailable'
    }
  }
}

/**
 * Provides `approval` (`ApprovalToken`) as a `McpApprovals`: compose it with the tools, then pass
 * the same instance to each `createMcpServer` (`approvals`) so its connection's user can be asked.
 */
export const mcpApprovalPlugin = definePlugin({
  name: 'mcp-approval',
  provides: [ApprovalToken],
  apply(ctx) {
    ctx.provide(ApprovalToken, new McpApprovals())
  },
})
