import { serveStdio } from '@toolvisor/mcp-server'
import { compose } from '../compose.js'
import { configFrom, parse, RUNTIME_FLAGS, RUNTIME_FLAGS_HELP } from '../flags.js'
import type { Io } from '../output.js'
import { VERSION } from '../version.js'

export const MCP_USAGE = `usage: toolvisor mcp [--toolbox DIR ...] [--config FILE] [flags]

Serves the tools of the toolboxes and the configured capabilities to one MCP client over stdio (stdin/stdout carry JSON-RPC; logs
go to stderr). Tools that fail to load are logged with their path and reason; the others are
served. Add it to a client, e.g. Claude Code:  claude mcp add toolvisor -- toolvisor mcp --toolbox DIR

${RUNTIME_FLAGS_HELP}`

/** `toolvisor mcp --toolbox DIR...`: an MCP server over stdio, one session, until stdin closes. */
export async function mcpCommand(
  argv: readonly string[],
  io: Io,
  signals: NodeJS.EventEmitter = process,
): Promise<number> {
  const { values, positionals } = parse(argv, RUNTIME_FLAGS, MCP_USAGE)
  if (values.help) {
    io.out(`${MCP_USAGE}\n`)
    return 0
  }
  if (positionals.length > 0) {
    io.err(
      `toolvisor mcp: unexpected argument "${positionals[0]}"; toolboxes are given with --toolbox DIR\n\n${MCP_USAGE}\n`,
    )
    return 2
  }
  const config = configFrom(values)
  if (config.toolboxes.length === 0 && config.capabilities.length === 0) {
    io.err(
      `toolvisor mcp: nothing to serve: pass --toolbox DIR, or toolboxes or capabilities in --config FILE\n`,
    )
    return 2
  }
  const composed = await compose(config)
  const stop = new AbortController()
  const onSignal = () => stop.abort()
  signals.on('SIGINT', onSignal)
  signals.on('SIGTERM', onSignal)
  try {
    await serveStdio(composed.tools, {
      name: 'toolvisor',
      version: VERSION,
      signal: stop.signal,
      log: (line) => io.err(`${line}\n`),
    })
    return 0
  } finally {
    signals.off('SIGINT', onSignal)
    signals.off('SIGTERM', onSignal)
    await composed.kernel.dispose()
  }
}
