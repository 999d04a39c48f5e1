import { randomUUID } from 'node:crypto'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
  type ListToolsResult,
  type Tool as McpTool,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js'
import type { ToolCallContext, ToolProgress, ToolRegistry } from '@toolvisor/toolbox'
import { z } from 'zod'
import { McpServerError } from './errors.js'
import { ClientIds } from './internal/client-ids.js'
import { errorResult, messageOf, toCallToolResult } from './internal/result.js'

/** How `createMcpServer` (and `serveStdio`) is set up. */
export interface McpServerOptions {
  /** The server name MCP clients show (`serverInfo.name`), e.g. `toolvisor`. Also prefixes log lines. */
  readonly name: string
  /** The server version (`serverInfo.version`). */
  readonly version: string
  /** The toolvisor session every call of this connection runs in. Default: `mcp-<random uuid>`. */
  readonly sessionId?: string
  /** Where log lines go, one call per line, without the newline. Default: stderr. Never stdout. */
  readonly log?: (line: string) => void
  /**
   * After the connection closes (every call's signal is then aborted), how long `closed` waits for
   * the calls in flight to settle before it resolves anyway and logs the ones still running.
   * Default 5000 ms.
   */
  readonly settleTimeoutMs?: number
  /**
   * The largest message the client may send, in bytes, without its line ending. A longer one is
   * discarded as it arrives (never buffered whole) and answered with a JSON-RPC error; the session
   * goes on. Used by `serveStdio`. Default `MCP_DEFAULT_LIMITS.maxMessageBytes` (10 MiB).
   */
  readonly maxMessageBytes?: number
}

/** One MCP connection serving the `tools` registry as one toolvisor session. */
export interface McpSurface {
  /** The SDK server underneath, for what this package does not cover (extra capabilities, handlers). */
  readonly server: Server
  /** The toolvisor session of this connection: every call's `ctx.sessionId`. */
  readonly sessionId: string
  /**
   * Logs the registry's load errors, then serves on `transport` (an SDK transport: stdio,
   * Streamable HTTP, in-memory). Once only: a second call throws `MCP_ERR_ALREADY_CONNECTED`.
   */
  connect(transport: Transport): Promise<void>
  /** Closes the connection: calls in flight are aborted. Resolves when `closed` does. */
  close(): Promise<void>
  /**
   * Resolves once the connection has closed, from either side, and every call in flight has
   * settled (or `settleTimeoutMs` has passed). Never rejects.
   */
  readonly closed: Promise<void>
}

/** An optional bound: a positive integer of `unit`. */
const positive = (unit: string) => {
  const message = `must be a positive integer (${unit})`
  return z.number(message).int(message).positive(message).optional()
}

const optionsSchema = z.object({
  name: z.string().min(1, 'must be a non-empty string (the server name MCP clients show)'),
  version: z.string().min(1, 'must be a non-empty string (the server version MCP clients show)'),
  sessionId: z
    .string()
    .min(1, 'must be a non-empty string when given (leave it out for a random one)')
    .optional(),
  log: z
    .custom<(line: string) => void>((v) => typeof v === 'function', 'must be a function (line) => void')
    .optional(),
  settleTimeoutMs: z.number().int().nonnegative().optional(),
  maxMessageBytes: positive('bytes'),
})

/** Validates the options at the edge; the message names the field and what to pass instead. */
function parseOptions(where: string, options: McpServerOptions): void {
  const parsed = optionsSchema.safeParse(options)
  if (parsed.success) return
  const issue = parsed.error.issues[0]
  const field = issue?.path.map(String).join('.') || '(options)'
  throw new McpServerError(
    'MCP_ERR_INVALID_OPTIONS',
    `${where}: options.${field}: ${issue?.message ?? 'invalid'}`,
  )
}

const writeStderr = (line: string): void => {
  process.stderr.write(`${line}\n`)
}

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>

/**
 * Creates the MCP surface of a `tools` registry: `tools/list` lists every tool under its
 * provider-safe name, `tools/call` runs one with the connection's session, the client's
 * cancellation and, when the client sent a progress token, progress notifications.
 *
 * A tool failure is a result with `isError`, never a protocol error: an unknown name, a tool that
 * rejects (a bug, logged) and a failed run all answer the model in text. Logs go to
 * `options.log` (stderr by default), never to stdout.
 *
 * @example
 * ```ts
 * const surface = createMcpServer(tools, { name: 'toolvisor', version: '0.1.0' })
 * await surface.connect(new StdioServerTransport())
 * await surface.closed
 * ```
 */
export function createMcpServer(tools: ToolRegistry, options: McpServerOptions): McpSurface {
  parseOptions('createMcpServer', options)
  const log = options.log ?? writeStderr
  const prefix = options.name
  const sessionId = options.sessionId ?? `mcp-${randomUUID()}`
  const settleTimeoutMs = options.settleTimeoutMs ?? 5000

  const server = new Server({ name: options.name, version: options.version }, { capabilities: { tools: {} } })
  const inflight = new Map<Promise<CallToolResult>, string>()
  let state: 'new' | 'connected' | 'closed' = 'new'
  let resolveClosed!: () => void
  const closed = new Promise<void>((resolve) => {
    resolveClosed = resolve
  })

  const settle = (): void => {
    if (inflight.size === 0) {
      resolveClosed()
      return
    }
    const timer = setTimeout(() => {
      const names = [...new Set(inflight.values())].join(', ')
      log(`${prefix}: ${inflight.size} call(s) still running ${settleTimeoutMs} ms after close: ${names}`)
      resolveClosed()
    }, settleTimeoutMs)
    timer.unref()
    void Promise.allSettled([...inflight.keys()]).then(() => {
      clearTimeout(timer)
      resolveClosed()
    })
  }

  server.onclose = () => {
    if (state === 'closed') return
    state = 'closed'
    settle()
  }
  server.onerror = (error) => log(`${prefix}: protocol error: ${messageOf(error)}`)

  server.setRequestHandler(ListToolsRequestSchema, (): ListToolsResult => {
    const listed: McpTool[] = tools.list().map((tool) => ({
      name: tools.safeName(tool.name),
      description: tool.description,
      inputSchema: tool.inputSchema as McpTool['inputSchema'],
    }))
    return { tools: listed }
  })

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const name = request.params.name
    const args = request.params.arguments ?? {}
    const ctx: ToolCallContext = {
      sessionId,
      signal: extra.signal,
      ...progressOption(extra, (line) => log(`${prefix}: ${line}`), name),
    }
    const call = runCall(tools, name, args, ctx, (line) => log(`${prefix}: ${line}`))
    inflight.set(call, name)
    try {
      return await call
    } finally {
      inflight.delete(call)
    }
  })

  return {
    server,
    sessionId,
    closed,
    async connect(transport) {
      if (state !== 'new') {
        throw new McpServerError(
          'MCP_ERR_ALREADY_CONNECTED',
          `createMcpServer: this server is ${state === 'connected' ? 'already connected' : 'closed'}; one server serves one connection (one session): create another with createMcpServer`,
        )
      }
      state = 'connected'
      const reports = tools.loadErrors()
      const failures = reports.filter((report) => report.severity === 'error')
      for (const report of failures) log(`${prefix}: tool not loaded: ${report.message}`)
      for (const report of reports)
        if (report.severity === 'warning') log(`${prefix}: warning: ${report.message}`)
      const count = tools.list().length
      log(
        `${prefix}: serving ${count} tool${count === 1 ? '' : 's'}${failures.length > 0 ? ` (${failures.length} failed to load)` : ''} as session ${sessionId}`,
      )
      try {
        await server.connect(new ClientIds(transport))
      } catch (error) {
        state = 'closed'
        resolveClosed()
        throw error
      }
    },
    async close() {
      if (state === 'new') {
        state = 'closed'
        resolveClosed()
      } else {
        await server.close()
      }
      await closed
    },
  }
}

/** Runs one call; a rejecting tool becomes an `isError` result and a log line, never a throw. */
async function runCall(
  tools: ToolRegistry,
  name: string,
  args: Record<string, unknown>,
  ctx: ToolCallContext,
  log: (line: string) => void,
): Promise<CallToolResult> {
  // The registry dispatches (it accepts the safe name and owns the "unknown tool" text); the lookup
  // only names the tool in logs by its internal name.
  const label = tools.get(name)?.name ?? name
  try {
    return toCallToolResult(await tools.call(name, args, ctx))
  } catch (error) {
    if (ctx.signal.aborted) {
      log(`tool "${label}" rejected after the call was cancelled: ${messageOf(error)}`)
    } else {
      log(`tool "${label}" rejected (a bug: tools answer failures with isError): ${stackOf(error)}`)
    }
    return errorResult(`tool "${name}" failed inside toolvisor: ${messageOf(error)}`)
  }
}

/**
 * `{ progress }` when the client sent `_meta.progressToken`, else nothing. The callback sends
 * `notifications/progress` for this request and never throws: once the request is cancelled or the
 * transport is gone, events are dropped (the first failure is logged).
 */
function progressOption(
  extra: Extra,
  log: (line: string) => void,
  name: string,
): { progress?: (progress: ToolProgress) => void } {
  const progressToken = extra._meta?.progressToken
  if (progressToken === undefined) return {}
  let reported = false
  const fail = (error: unknown): void => {
    if (reported) return
    reported = true
    log(`tool "${name}": a progress notification could not be sent (${messageOf(error)}); dropping the rest`)
  }
  return {
    progress(progress) {
      if (extra.signal.aborted || reported) return
      try {
        extra
          .sendNotification({
            method: 'notifications/progress',
            params: { progressToken, progress: progress.progress, message: progress.message },
          })
          .catch(fail)
      } catch (error) {
        fail(error)
      }
    },
  }
}

function stackOf(error: unknown): string {
  return error instanceof Error && error.stack ? error.stack : messageOf(error)
}
