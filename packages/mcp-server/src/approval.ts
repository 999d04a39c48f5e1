/**
 * The `approval` seam over MCP, in each revision's form (decision 0109, point 3). A 2025-11-25
 * client is asked through elicitation (`elicitation/create`) inside the call, when it declared the
 * capability. A 2026-07-28 call that asks answers `input_required` with the question and a signed
 * `requestState`, and its retry carries the answer. Otherwise the answer is `unavailable`, and the
 * tool that asked fails closed.
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
import { ApprovalStates } from './internal/approval-state.js'
import { speaksModern } from './internal/era.js'
import { Rounds } from './internal/input-round.js'

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
 * The approvals of every MCP connection of a toolvisor, by connection: each 2025 connection
 * attaches its SDK server while it is connected (`createMcpServer`'s `approvals` option), and a
 * request goes to the connection that made the call (`request.connection`), never to another
 * connection of the same session name (a second client of a `serve` session must not answer the
 * first one's questions). Each 2026-07-28 call is its own round, answered only by its own retry.
 * A request without a connection, or whose connection or call is gone, is `unavailable`.
 *
 * The `requestState` of a round is signed with a key made when this object is, and never written
 * down: a state is good for one retry of the same call in the same session, within `timeoutMs`.
 */
export class McpApprovals implements Approval {
  readonly #connections = new Map<ConnectionId, ApprovalConnection>()
  readonly #rounds: Rounds
  readonly #timeoutMs: number

  constructor(options: { readonly timeoutMs?: number } = {}) {
    this.#timeoutMs = options.timeoutMs ?? ASK_TIMEOUT_MS
    this.#rounds = new Rounds(new ApprovalStates(this.#timeoutMs))
    roundTables.set(this, this.#rounds)
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
    const round = request.connection === undefined ? undefined : this.#rounds.get(request.connection)
    if (round !== undefined) return round.answer(request)
    const attached = request.connection === undefined ? undefined : this.#connections.get(request.connection)
    // A connection answers for its own session only: a request naming another is a bug, refused.
    if (attached === undefined || attached.sessionId !== request.sessionId) return 'unavailable'
    const { server } = attached
    // A 2026-07-28 client is asked by its calls' rounds, never inside a call: a request routed to
    // its connection is a bug, refused. A 2025 client is asked when it can be.
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

/** Each `McpApprovals`' rounds, for this package's servers (not a part of its public face). */
const roundTables = new WeakMap<McpApprovals, Rounds>()

/** The rounds of `approvals`: a 2026-07-28 server opens one per call (`Rounds.open`). */
export function roundsOf(approvals: McpApprovals): Rounds {
  return roundTables.get(approvals)!
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
