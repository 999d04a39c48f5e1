import type { Server, Transport } from '@modelcontextprotocol/server'
import type { ReadBack } from '@toolvisor/answers'
import type { Mailbox } from '@toolvisor/mailbox'
import type { Sessions, TaskRegistry } from '@toolvisor/tasks'
import type { ConnectionId, ToolRegistry } from '@toolvisor/toolbox'
import type { McpApprovals } from './approval.js'
import { McpServerError } from './errors.js'
import { connectionServer } from './internal/connection.js'
import type { Inflight } from './internal/inflight.js'
import { endSession, latch } from './internal/lifecycle.js'
import { messageOf } from './internal/result.js'
import { TaskAnswers } from './internal/tasks.js'

/** How `createMcpServer` (and `serveStdio`) is set up. */
export interface McpServerOptions {
  /**
   * Where the connection's user can be asked to allow one call wider (`McpApprovals`, the
   * `approval` service): attached while connected, answered through elicitation when the client
   * declares it. Absent: a tool that asks gets no service here.
   */
  readonly approvals?: McpApprovals
  /** The server name MCP clients show (`serverInfo.name`), e.g. `toolvisor`. Also prefixes log lines. */
  readonly name: string
  /** The server version (`serverInfo.version`). */
  readonly version: string
  /** The toolvisor session every call of this connection runs in. Default: `mcp-<random uuid>`. */
  readonly sessionId?: string
  /**
   * The sessions service. The connection opens its session there when it connects (the open
   * session of that id again, when `sessionId` names one: a client that came back) and closes it
   * when the connection ends, which stops every task the session owns, unless `keepSession`.
   */
  readonly sessions?: Sessions
  /**
   * Leave the session open when the connection ends (a daemon that keeps a client's processes for
   * its return, and ends the session itself). Default false.
   */
  readonly keepSession?: boolean
  /** What operators see as the session's origin. Default `mcp`. */
  readonly origin?: string
  /**
   * The session's working directory (absolute), given to `sessions.open`: where its bash commands
   * run and what `workspace-write` lets them write (seed 001). Absent: the host's default.
   */
  readonly cwd?: string
  /**
   * The mailbox of the sessions. With it, the session's pending mail is folded into each result
   * (`[mail <id> from process:p1] ...` text blocks after the tool's own, at most `mailBytes`), and
   * the server declares `capabilities.logging` and sends a notice when mail waits. The session's
   * mailbox is opened at connect when nothing opened it (the `sessions` hooks of
   * `@toolvisor/tool-processes` do).
   */
  readonly mailbox?: Mailbox
  /**
   * The task registry. With it, the server speaks MCP Tasks (protocol 2025-11-25): it declares the
   * `tasks` capability, lists the tools that may run as tasks with `execution.taskSupport:
   * "optional"` (stream tools, service starts, `bash`), answers a `tools/call` with `task` with the
   * registry task the call started, and serves `tasks/get`, `tasks/result`, `tasks/cancel` and
   * `tasks/list` from the registry, for the connection's session only (decision 0070). A call
   * without `task` is answered as before.
   */
  readonly tasks?: TaskRegistry
  /**
   * Resolves once the tools are loaded (a CLI answers `initialize` first and loads its toolboxes
   * after). A `tools/list` that comes before waits for it, up to `firstLoadWaitMs`, so a client
   * that lists tools once and ignores `notifications/tools/list_changed` still sees them.
   */
  readonly firstLoad?: Promise<unknown>
  /** How long a `tools/list` waits for `firstLoad`. Default 15,000 ms. */
  readonly firstLoadWaitMs?: number
  /**
   * The words of the calls that read back what an answer left out (`processesReadBack` of
   * `@toolvisor/tool-processes`, the `read-back` service): the mail still waiting, an MCP task's
   * output. Absent: those texts say what waits, and name no tool.
   */
  readonly readBack?: ReadBack
  /**
   * The most bytes of mail folded into one result; 0: never fold (`processes wait` reads it).
   * Default `MCP_DEFAULT_LIMITS.mailBytes` (16 KiB).
   */
  readonly mailBytes?: number
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
  /**
   * How many bytes may wait for a client that does not read stdout. Once answers wait for it,
   * progress notifications are dropped (each call's result counts them); a message that would make
   * the bytes waiting exceed this bound ends the session instead. Used by `serveStdio`. Default
   * `MCP_DEFAULT_LIMITS.maxQueuedBytes` (16 MiB).
   */
  readonly maxQueuedBytes?: number
  /**
   * How many calls of this session run at once; more wait, first come first run. Default
   * `MCP_DEFAULT_LIMITS.maxConcurrentCalls` (32).
   */
  readonly maxConcurrentCalls?: number
  /**
   * How many calls may wait for a place; one more is refused at once with an `isError` result that
   * says why. Default `MCP_DEFAULT_LIMITS.maxQueuedCalls` (64); 0 refuses every call past the
   * running ones.
   */
  readonly maxQueuedCalls?: number
  /**
   * Progress notifications a second per call, sustained, after a burst of `progressBurst`; events
   * in between are coalesced (the latest goes out when the rate allows, the last one always), never
   * blocking the call, and counted in the result's `_meta["toolvisor/progress"]`. Defaults 10 and 20.
   */
  readonly progressPerSecond?: number
  /** See `progressPerSecond`. */
  readonly progressBurst?: number
}

/** One MCP connection serving the `tools` registry as one toolvisor session. */
export interface McpSurface {
  /** The SDK server underneath, for what this package does not cover (extra capabilities, handlers). */
  readonly server: Server
  /** The toolvisor session of this connection: every call's `ctx.sessionId`. */
  readonly sessionId: string
  /**
   * This connection's identity: every call's `ctx.connection`, and the key its approvals are
   * routed by (`McpApprovals.attach`). Other connections of the same session have their own.
   */
  readonly connection: ConnectionId
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
  return createSurface(tools, options, new TaskAnswers())
}

/**
 * `createMcpServer`, with the answers of tasks in a table the caller shares (every connection of
 * one HTTP server), so a client that reconnects fetches what it started before.
 */
export function createSurface(
  tools: ToolRegistry,
  options: McpServerOptions,
  answers: TaskAnswers,
): McpSurface {
  const built = connectionServer(tools, options, answers)
  const { log, sessionId, connection, server, inflight } = built
  let state: 'new' | 'connected' | 'closed' = 'new'
  const [closed, resolveClosed] = latch()
  const end = (): void => {
    state = 'closed'
    built.stop()
  }

  server.onclose = () => {
    if (state === 'closed') return
    end()
    void settle(inflight, options, sessionId, log).then(resolveClosed)
  }
  server.onerror = (error) => log(`protocol error: ${messageOf(error)}`)

  return {
    server,
    sessionId,
    connection,
    closed,
    async connect(transport) {
      if (state !== 'new') throw alreadyConnected(state)
      state = 'connected'
      built.start()
      try {
        await server.connect(transport)
      } catch (error) {
        end()
        resolveClosed()
        throw error
      }
    },
    async close() {
      if (state === 'new') {
        end()
        resolveClosed()
      } else {
        await server.close()
      }
      await closed
    },
  }
}

/** After the connection closed: the calls in flight settle (bounded), then the session ends. */
async function settle(
  inflight: Inflight,
  options: McpServerOptions,
  sessionId: string,
  log: (line: string) => void,
): Promise<void> {
  await inflight.settled(options.settleTimeoutMs ?? 5000, log)
  await endSession(options, sessionId, log)
}

function alreadyConnected(state: 'connected' | 'closed'): McpServerError {
  return new McpServerError(
    'MCP_ERR_ALREADY_CONNECTED',
    `createMcpServer: this server is ${state === 'connected' ? 'already connected' : 'closed'}; one server serves one connection (one session): create another with createMcpServer`,
  )
}
