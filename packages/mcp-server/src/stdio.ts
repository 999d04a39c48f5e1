import { randomUUID } from 'node:crypto'
import type { Readable, Writable } from 'node:stream'
import { serveStdio as serveEras } from '@modelcontextprotocol/server/stdio'
import type { ToolRegistry } from '@toolvisor/toolbox'
import { type ConnectionServer, connectionServer } from './internal/connection.js'
import type { ProtocolEra } from './internal/era.js'
import { endSession } from './internal/lifecycle.js'
import { parseOptions } from './internal/options.js'
import { messageOf } from './internal/result.js'
import { stderrLog } from './internal/stderr-log.js'
import { StdioTransport } from './internal/stdio-transport.js'
import { TaskAnswers } from './internal/tasks.js'
import type { McpServerOptions } from './server.js'

/** `serveStdio` options: the server's, plus the streams and a stop signal. */
export interface ServeStdioOptions extends McpServerOptions {
  /** Where JSON-RPC comes in. Default: `process.stdin`. */
  readonly stdin?: Readable
  /** Where JSON-RPC goes out, and nothing else. Default: `process.stdout`. */
  readonly stdout?: Writable
  /** Aborting it closes the server (a CLI ties it to SIGINT/SIGTERM). */
  readonly signal?: AbortSignal
}

/**
 * Serves the registry over stdio as one session, and resolves when the connection is over: stdin
 * ended (the client closed it or went away), stdout broke, `signal` aborted, or the client closed.
 * Calls in flight are cancelled first (their `ctx.signal` aborts) and have settled, within
 * `settleTimeoutMs`, when it resolves, so a CLI can `await` it and then dispose the kernel.
 *
 * Both revisions are served on the same streams (decision 0109): the client's first message fixes
 * the era of the connection, a 2025 client (`initialize`) is served MCP 2025-11-25 as before, and a
 * 2026 client (a request carrying the 2026-07-28 envelope) is served that revision: `server/discover`,
 * the tools, and `tools/list_changed` through its `subscriptions/listen`. Either way the
 * connection is the one toolvisor session, `sessionId` or a new `mcp-<uuid>`.
 *
 * Only JSON-RPC is written to stdout; logs go to `options.log` (stderr by default).
 *
 * @example
 * ```ts
 * const stop = new AbortController()
 * process.once('SIGTERM', () => stop.abort())
 * await serveStdio(tools, { name: 'toolvisor', version: '0.1.0', signal: stop.signal })
 * await kernel.dispose()
 * ```
 */
export async function serveStdio(tools: ToolRegistry, options: ServeStdioOptions): Promise<void> {
  const { stdin = process.stdin, stdout = process.stdout, signal, ...rest } = options
  const limits = parseOptions('serveStdio', rest)
  const write = options.log ?? stderrLog
  const log = (line: string): void => write(`${options.name}: ${line}`)
  if (signal?.aborted) return
  // One session for the connection, whichever instances the SDK asks for while it settles the era.
  const serverOptions = { ...rest, sessionId: rest.sessionId ?? `mcp-${randomUUID()}` }
  const transport = new StdioTransport({
    stdin,
    stdout,
    maxMessageBytes: limits.maxMessageBytes,
    maxQueuedBytes: limits.maxQueuedBytes,
    log,
  })
  const instances = new Instances(tools, serverOptions)
  const handle = serveEras((ctx) => instances.build(ctx.era), {
    legacy: 'serve',
    transport,
    onerror: (error) => log(`stdio: ${messageOf(error)}`),
  })
  const stop = (): void => {
    handle.close().catch((error: unknown) => log(`closing failed: ${messageOf(error)}`))
  }
  signal?.addEventListener('abort', stop, { once: true })
  try {
    await transport.ended
  } finally {
    signal?.removeEventListener('abort', stop)
  }
  await instances.settle(options.settleTimeoutMs ?? 5000, log)
  await endSession(serverOptions, serverOptions.sessionId, log)
}

/**
 * The SDK servers built for the one stdio connection, all serving its one session. A 2025 one is
 * built and started at once, as a connection always was (the session opens and the log tells what
 * is served before the client speaks), and handed to the SDK when the client opens with
 * `initialize`. A client that opens in the 2026 era gets a server of its own, and the waiting one is
 * stopped; a client that probes with `server/discover` and then speaks 2025 gets a third. Closing
 * one undoes only what it set up: the session ends once, when the connection does.
 */
class Instances {
  readonly #built: ConnectionServer[] = []
  readonly #answers = new TaskAnswers()
  #waiting: ConnectionServer | undefined

  constructor(
    private readonly tools: ToolRegistry,
    private readonly options: McpServerOptions,
  ) {
    this.#waiting = this.#make('legacy', false)
  }

  /** The factory `serveStdio` of the SDK calls for the connection's era. */
  build(era: ProtocolEra): ConnectionServer['server'] {
    const waiting = this.#waiting
    this.#waiting = undefined
    if (waiting !== undefined && era === 'legacy') return waiting.server
    waiting?.stop()
    const made = this.#make(era, true)
    if (era === 'modern') made.log('the client speaks MCP 2026-07-28')
    return made.server
  }

  /** After the connection closed: what each server set up is undone and its calls settle (bounded). */
  async settle(timeoutMs: number, log: (line: string) => void): Promise<void> {
    for (const instance of this.#built) instance.stop()
    await Promise.all(this.#built.map((instance) => instance.inflight.settled(timeoutMs, log)))
  }

  #make(era: ProtocolEra, quiet: boolean): ConnectionServer {
    const instance = connectionServer(this.tools, this.options, this.#answers, era)
    const { server, log } = instance
    server.onclose = () => instance.stop()
    server.onerror = (error) => log(`protocol error: ${messageOf(error)}`)
    this.#built.push(instance)
    instance.start({ quiet })
    return instance
  }
}
