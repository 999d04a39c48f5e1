import { serveStdio } from '@toolvisor/mcp-server'
import type { Served } from '@toolvisor/toolbox'
import type { Config } from '../config.js'
import { type Composed, compose, reportLost, sessionBounds } from '../internal/compose.js'
import { configFileOf, configOf, parseLine, usageOf } from '../internal/flags.js'
import { withShutdownSignals } from '../internal/signals.js'
import { checkToolboxes } from '../internal/toolboxes.js'
import { VERSION } from '../internal/version.js'
import { explain, human, type Io, logTo } from '../output.js'
import { bridgeCommand } from './bridge.js'

/** `toolvisor mcp --help`. */
export const MCP_USAGE = usageOf(
  'mcp',
  `usage: toolvisor mcp [--toolbox DIR ...] [--config FILE] [flags]

Serves the tools of the toolboxes and the configured capabilities to one MCP client over stdio
(stdin/stdout carry JSON-RPC; logs go to stderr), in the revision the client speaks: MCP 2025-11-25
or 2026-07-28. Tools that fail to load are logged with their
path and reason; the others are served. Add it to a client, e.g. Claude Code:
  claude mcp add toolvisor -- toolvisor mcp --toolbox DIR
With --connect it is a bridge to a toolvisor serve daemon instead. The bounds of the session
(--max-*, --progress-*, --mail-bytes) are explained in docs/decisions/0015-mcp-boundary-bounds.md.`,
)

/**
 * How long output the client has not read may hold the exit. A pending write on a pipe nobody
 * reads keeps Node's event loop alive for ever, so a server whose client stopped reading would
 * outlive SIGTERM and stdin EOF; after this grace it exits without that output.
 */
const UNREAD_OUTPUT_GRACE_MS = 1000

/** Exits after the grace if `stdout` still holds output the client has not read. */
function exitDespiteUnreadOutput(stdout: NodeJS.WriteStream, io: Io): void {
  if (stdout.writableLength === 0) return
  io.err(
    `toolvisor: ${stdout.writableLength} bytes of output were not read by the client; exiting without them in ${UNREAD_OUTPUT_GRACE_MS} ms unless it reads\n`,
  )
  setTimeout(() => process.exit(), UNREAD_OUTPUT_GRACE_MS).unref()
}

/** `toolvisor mcp --toolbox DIR...`: an MCP server over stdio, one session, until stdin closes. */
export async function mcpCommand(
  argv: readonly string[],
  io: Io,
  signals: NodeJS.EventEmitter = process,
): Promise<number> {
  const { values, positionals } = parseLine('mcp', argv, MCP_USAGE)
  if (values.help) {
    io.out(`${MCP_USAGE}\n`)
    return 0
  }
  if (positionals.length > 0) {
    io.err(
      `toolvisor mcp: unexpected argument ${human(JSON.stringify(positionals[0]))}; toolboxes are given with --toolbox DIR\n\n${MCP_USAGE}\n`,
    )
    return 2
  }
  const config = configOf('mcp', values)
  const mcp = config.mcp ?? {}
  if (mcp.connect !== undefined) {
    const { connect, session, tokenFile, workspace } = mcp
    return bridgeCommand({ connect, session, tokenFile, workspace, stateDir: config.stateDir }, io, signals)
  }
  if (config.toolboxes.length === 0 && config.capabilities.length === 0 && !config.bash?.enabled) {
    io.err(
      `toolvisor mcp: nothing to serve: pass --toolbox DIR or --bash, or toolboxes, capabilities or bash in --config FILE\n`,
    )
    return 2
  }
  checkToolboxes(config.toolboxes, mcp.allowEmpty === true) // missing or no tool: exit 2, before serving
  return serveLocal(config, configFileOf(values), io, signals)
}

/** Composes a runtime here and serves it over stdio until the client goes. */
async function serveLocal(
  config: Config,
  configFile: string | undefined,
  io: Io,
  signals: NodeJS.EventEmitter,
): Promise<number> {
  const { session, loadFirst } = config.mcp ?? {}
  // Unless --load-first, the toolboxes are loaded once the server answers: a describe that hangs
  // must not hold `initialize` (the registry announces the tools as they come). Capabilities stay
  // in compose: a required one with no backend still stops the command before it serves.
  const composed = await compose({ ...config, toolboxes: [] }, { configFile })
  reportLost(composed, logTo(io))
  const stop = withShutdownSignals(signals)
  let loading = loadFirst ? Promise.resolve(await loadToolboxes(composed, config.toolboxes, io)) : undefined
  // A tools/list before the toolboxes are loaded waits for them (bounded): clients that list once
  // and never refresh (Codex, the Inspector's --cli) still see every tool.
  let markLoaded!: () => void
  const firstLoad = new Promise<void>((resolve) => {
    markLoaded = resolve
  })
  try {
    const serving = serveStdio(composed.tools, {
      name: 'toolvisor',
      version: VERSION,
      signal: stop.signal,
      // Log lines quote tool names, client-supplied text and protocol errors.
      log: logTo(io),
      sessions: composed.sessions,
      mailbox: composed.mailbox,
      ...(composed.readBack ? { readBack: composed.readBack } : {}),
      ...(composed.approvals ? { approvals: composed.approvals } : {}),
      tasks: composed.tasks,
      ...(config.mailBytes !== undefined ? { mailBytes: config.mailBytes } : {}),
      origin: 'mcp-stdio',
      firstLoad,
      ...(session !== undefined ? { sessionId: session } : {}),
      ...sessionBounds(config),
    })
    loading ??= loadToolboxes(composed, config.toolboxes, io)
    void loading.finally(markLoaded)
    await serving
    return 0
  } finally {
    stop.off()
    // Disposal stops the describes still running, so the loading ends with them.
    await composed.kernel.dispose()
    ;(await loading)?.close()
    exitDespiteUnreadOutput(process.stdout, io)
  }
}

/**
 * Loads the toolboxes into the registry the server already serves, as the toolbox plugin does at
 * compose time: every tool, its load reports (the server logs them), and the shared `help` tool.
 * Never rejects: a failure is logged, and the server goes on with what it has.
 */
async function loadToolboxes(
  composed: Composed,
  toolboxes: Config['toolboxes'],
  io: Io,
): Promise<Served | undefined> {
  const started = Date.now()
  try {
    const { loaded, reports } = await composed.binary.loadToolboxes(toolboxes)
    for (const report of reports) composed.tools.reportLoadError(report)
    // The same path the toolbox plugin and `check` take: reserved names, collisions and modes
    // without a handler become load reports, the others are served with the shared help tool.
    const served = composed.binary.serve(composed.tools, loaded)
    io.err(`toolvisor: toolboxes loaded in ${Date.now() - started} ms\n`)
    return served
  } catch (error) {
    io.err(`toolvisor: loading the toolboxes failed: ${human(explain(error))}\n`)
    return undefined
  }
}
