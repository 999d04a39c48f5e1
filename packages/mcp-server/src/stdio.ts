import type { Readable, Writable } from 'node:stream'
import type { ToolRegistry } from '@toolvisor/toolbox'
import { parseOptions } from './internal/options.js'
import { messageOf } from './internal/result.js'
import { stderrLog } from './internal/stderr-log.js'
import { StdioTransport } from './internal/stdio-transport.js'
import { createMcpServer, type McpServerOptions } from './server.js'

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
  const { stdin = process.stdin, stdout = process.stdout, signal, ...serverOptions } = options
  const limits = parseOptions('serveStdio', serverOptions)
  const surface = createMcpServer(tools, serverOptions)
  const log = options.log ?? stderrLog
  if (signal?.aborted) return surface.close()

  const stop = (): void => {
    surface.close().catch((error: unknown) => log(`${options.name}: closing failed: ${messageOf(error)}`))
  }
  signal?.addEventListener('abort', stop, { once: true })
  try {
    const transport = new StdioTransport({
      stdin,
      stdout,
      maxMessageBytes: limits.maxMessageBytes,
      maxQueuedBytes: limits.maxQueuedBytes,
      log: (line) => log(`${options.name}: ${line}`),
    })
    await surface.connect(transport)
    await surface.closed
  } finally {
    signal?.removeEventListener('abort', stop)
  }
}
