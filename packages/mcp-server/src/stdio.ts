import type { Readable, Writable } from 'node:stream'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import type { ToolRegistry } from '@toolvisor/toolbox'
import { messageOf } from './internal/result.js'
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
  const surface = createMcpServer(tools, serverOptions)
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`))
  if (signal?.aborted) return surface.close()

  const stop = (): void => {
    surface.close().catch((error: unknown) => log(`${options.name}: closing failed: ${messageOf(error)}`))
  }
  // The SDK's StdioServerTransport does not watch for EOF (typescript-sdk#2002): without this a
  // client that closes our stdin would leave the server, and its tools, running.
  const onStdoutError = (error: Error): void => {
    log(`${options.name}: stdout failed (${error.message}); closing`)
    stop()
  }
  stdin.on('end', stop)
  stdin.on('close', stop)
  stdout.on('error', onStdoutError)
  signal?.addEventListener('abort', stop, { once: true })
  try {
    await surface.connect(new StdioServerTransport(stdin, stdout))
    await surface.closed
  } finally {
    stdin.off('end', stop)
    stdin.off('close', stop)
    stdout.off('error', onStdoutError)
    signal?.removeEventListener('abort', stop)
  }
}
