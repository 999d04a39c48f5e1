/**
 * The `approval` seam over MCP: the user of a connection is asked through elicitation
 * (`elicitation/create`), when the client declared the capability; otherwise the answer is
 * `unavailable`, and the tool that asked fails closed.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { definePlugin } from '@toolvisor/kernel'
import { type Approval, type ApprovalOutcome, type ApprovalRequest, ApprovalToken } from '@toolvisor/toolbox'

/** How long a question waits for the user before it counts as cancelled. Default 10 minutes. */
const ASK_TIMEOUT_MS = 600_000

/**
 * The approvals of every MCP connection of a toolvisor, by session: each connection attaches its
 * SDK server while it is connected (`createMcpServer`'s `approvals` option), and a request goes to
 * the connection of its session.
 */
export class McpApprovals implements Approval {
  readonly #servers = new Map<string, Server>()
  readonly #timeoutMs: number

  constructor(options: { readonly timeoutMs?: number } = {}) {
    this.#timeoutMs = options.timeoutMs ?? ASK_TIMEOUT_MS
  }

  /** Routes the session's questions to `server` until the returned detach is called. */
  attach(sessionId: string, server: Server): () => void {
    this.#servers.set(sessionId, server)
    return () => {
      if (this.#servers.get(sessionId) === server) this.#servers.delete(sessionId)
    }
  }

  async request(request: ApprovalRequest): Promise<ApprovalOutcome> {
    const server = request.sessionId === undefined ? undefined : this.#servers.get(request.sessionId)
    if (server?.getClientCapabilities()?.elicitation === undefined) return 'unavailable'
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

/** What the user reads: the exact command, the model's justification and the mode it would get. */
export function approvalMessage(request: ApprovalRequest): string {
  return [
    `Allow ${request.tool} to run this exact command once under the "${request.mode}" sandbox mode?`,
    '',
    request.command,
    '',
    `Justification: ${request.justification}`,
    '',
    'Accept allows this one call only; nothing is remembered. Decline refuses it.',
  ].join('\n')
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
