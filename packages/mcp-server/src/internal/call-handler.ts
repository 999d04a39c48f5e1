import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js'
import type {
  CallToolRequest,
  CallToolResult,
  ServerNotification,
  ServerRequest,
} from '@modelcontextprotocol/sdk/types.js'
import type { ToolCallContext, ToolRegistry } from '@toolvisor/toolbox'
import { CallGate } from './call-gate.js'
import { foldMail, type SessionMailOptions } from './mail.js'
import type { Limits } from './options.js'
import { CallProgress } from './progress.js'
import { errorResult, messageOf, toCallToolResult, withPresentation } from './result.js'

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>

/** What every call of one connection shares. */
export interface CallHandlerOptions {
  readonly tools: ToolRegistry
  readonly sessionId: string
  /** Logs one line (already prefixed with the server name). */
  readonly log: (line: string) => void
  readonly limits: Limits
  /** The session's mail, folded into each result (absent: none). */
  readonly mail: SessionMailOptions | undefined
}

/** The key under which a result's `_meta` counts progress events that were not sent. */
export const PROGRESS_META_KEY = 'toolvisor/progress'

/**
 * The `tools/call` handler: runs the call with the connection's session, the client's cancellation
 * and, when the client sent a progress token, progress notifications; a result whose progress was
 * not all sent says so in `_meta["toolvisor/progress"]`.
 */
export function callHandler(options: CallHandlerOptions) {
  const gate = new CallGate(options.limits)
  return async (request: CallToolRequest, extra: Extra): Promise<CallToolResult> => {
    const name = request.params.name
    const { running, waiting } = gate.load
    const entered = await gate.enter(extra.signal)
    // Aborted while waiting: the client gets no answer (MCP cancellation), so none is built.
    if (entered === 'aborted') return errorResult(`tool "${name}" was cancelled before it ran`)
    if (entered === 'refused') return errorResult(refusal(name, running, waiting, options.limits))
    try {
      return await callOnce(options, request, extra)
    } finally {
      entered()
    }
  }
}

/** One call that got its place. */
async function callOnce(
  options: CallHandlerOptions,
  request: CallToolRequest,
  extra: Extra,
): Promise<CallToolResult> {
  const name = request.params.name
  const token = extra._meta?.progressToken
  const progress =
    token === undefined
      ? undefined
      : new CallProgress({
          token,
          send: (notification) => extra.sendNotification(notification),
          signal: extra.signal,
          log: (line) => options.log(`tool "${name}": ${line}`),
          perSecond: options.limits.progressPerSecond,
          burst: options.limits.progressBurst,
        })
  const ctx: ToolCallContext = {
    sessionId: options.sessionId,
    signal: extra.signal,
    ...(progress ? { progress: progress.report } : {}),
  }
  const result = withMail(await runCall(options, name, request.params.arguments ?? {}, ctx), options, extra)
  const count = await progress?.count()
  return count ? { ...result, _meta: { ...result._meta, [PROGRESS_META_KEY]: count } } : result
}

/**
 * The result with the session's pending mail after the tool's own content. A cancelled call's
 * result never reaches the client, so it delivers nothing: the mail waits for the next one.
 */
function withMail(result: CallToolResult, options: CallHandlerOptions, extra: Extra): CallToolResult {
  if (options.mail === undefined || extra.signal.aborted) return result
  const blocks = foldMail(options.mail)
  if (blocks.length === 0) return result
  return {
    ...result,
    content: [...result.content, ...blocks.map((text) => ({ type: 'text' as const, text }))],
  }
}

function refusal(name: string, running: number, waiting: number, limits: Limits): string {
  return `tool "${name}" was not run: this session already has ${running} calls running and ${waiting} waiting (maxConcurrentCalls ${limits.maxConcurrentCalls}, maxQueuedCalls ${limits.maxQueuedCalls}); retry when one of them has finished`
}

/** Runs one call; a rejecting tool becomes an `isError` result and a log line, never a throw. */
async function runCall(
  { tools, log }: CallHandlerOptions,
  name: string,
  args: Record<string, unknown>,
  ctx: ToolCallContext,
): Promise<CallToolResult> {
  // The registry dispatches (it accepts the safe name and owns the "unknown tool" text); the lookup
  // only names the tool in logs by its internal name.
  const tool = tools.get(name)
  const label = tool?.name ?? name
  try {
    const answer = await tools.call(name, args, ctx)
    return withPresentation(toCallToolResult(answer), tool, args, answer)
  } catch (error) {
    if (ctx.signal.aborted) {
      log(`tool "${label}" rejected after the call was cancelled: ${messageOf(error)}`)
    } else {
      log(`tool "${label}" rejected (a bug: tools answer failures with isError): ${stackOf(error)}`)
    }
    return errorResult(`tool "${name}" failed inside toolvisor: ${messageOf(error)}`)
  }
}

function stackOf(error: unknown): string {
  return error instanceof Error && error.stack ? error.stack : messageOf(error)
}
