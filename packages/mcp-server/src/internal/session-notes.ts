import type { Server } from '@modelcontextprotocol/server'
import type { Sessions } from '@toolvisor/tasks'

/**
 * What operators see of a session that the surface alone hears (`Sessions.note`, the operator
 * page): its client as the client named itself, once it initialized, and each call it made.
 */

/** Notes the session's client (`claude-code 2.1.197`) once the connection initialized. */
export function notedClient(server: Server, sessions: Sessions | undefined, sessionId: string): void {
  if (sessions === undefined) return
  const before = server.oninitialized
  server.oninitialized = () => {
    before?.()
    const client = server.getClientVersion()
    if (client) sessions.note(sessionId, { client: `${client.name} ${client.version}` })
  }
}

/** The call handler, each call noted (tool, when, how long, an error answer): a oneshot's only trace. */
export function notedCalls<Request extends { readonly params: { readonly name: string } }, Context, Result>(
  handle: (request: Request, ctx: Context) => Promise<Result>,
  sessions: Sessions | undefined,
  sessionId: string,
): (request: Request, ctx: Context) => Promise<Result> {
  if (sessions === undefined) return handle
  return async (request, ctx) => {
    const at = Date.now()
    const result = await handle(request, ctx)
    const error =
      typeof result === 'object' && result !== null && 'isError' in result && result.isError === true
    sessions.note(sessionId, { call: { tool: request.params.name, at, ms: Date.now() - at, error } })
    return result
  }
}
