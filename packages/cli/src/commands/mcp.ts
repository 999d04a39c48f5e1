import { MCP_DEFAULT_LIMITS, type McpServerOptions, serveStdio } from '@toolvisor/mcp-server'
import { PROFILES } from '@toolvisor/tool-bash'
import type { Served } from '@toolvisor/toolbox'
import { type Composed, compose, reportLost } from '../compose.js'
import { BashSection, type Config } from '../config.js'
import { CliError } from '../errors.js'
import { configFrom, parse, RUNTIME_FLAGS, RUNTIME_FLAGS_HELP } from '../flags.js'
import { explain, type Io } from '../output.js'
import { checkToolboxes } from '../toolboxes.js'
import { VERSION } from '../version.js'
import { bridgeCommand } from './bridge.js'

/** The bounds of the MCP session an operator can set, by flag, and the least value of each. */
const LIMIT_FLAGS = {
  'max-message-bytes': { option: 'maxMessageBytes', min: 1 },
  'max-queued-bytes': { option: 'maxQueuedBytes', min: 1 },
  'max-concurrent-calls': { option: 'maxConcurrentCalls', min: 1 },
  'max-queued-calls': { option: 'maxQueuedCalls', min: 0 },
  'progress-per-second': { option: 'progressPerSecond', min: 1 },
  'progress-burst': { option: 'progressBurst', min: 1 },
  'mail-bytes': { option: 'mailBytes', min: 0 },
} as const satisfies Record<string, { option: keyof typeof MCP_DEFAULT_LIMITS; min: 0 | 1 }>

const MCP_FLAGS = {
  ...RUNTIME_FLAGS,
  session: { type: 'string' as const },
  bash: { type: 'boolean' as const },
  'bash-profile': { type: 'string' as const },
  'allow-empty': { type: 'boolean' as const },
  'load-first': { type: 'boolean' as const },
  connect: { type: 'string' as const },
  'token-file': { type: 'string' as const },
  ...Object.fromEntries(Object.keys(LIMIT_FLAGS).map((flag) => [flag, { type: 'string' }] as const)),
}

export const MCP_USAGE = `usage: toolvisor mcp [--toolbox DIR ...] [--config FILE] [flags]

Serves the tools of the toolboxes and the configured capabilities to one MCP client over stdio (stdin/stdout carry JSON-RPC; logs
go to stderr). Tools that fail to load are logged with their path and reason; the others are
served. Add it to a client, e.g. Claude Code:  claude mcp add toolvisor -- toolvisor mcp --toolbox DIR

${RUNTIME_FLAGS_HELP}
  --allow-empty        serve a toolbox that holds no tool (else: exit 2, as for a missing one)
  --load-first         load every tool before answering initialize (at most the describe timeout,
                       10 s), for clients that list tools once and ignore list_changed (Codex,
                       the Inspector's --cli); by default the tools are announced as they load
  --session NAME       the session this client runs in (default a fresh mcp-<uuid>). A stable name
                       lets the client, after a crash, see the tasks the dead server lost
  --bash               serve the bash tools too (bash, bash_output, bash_kill), running commands
                       as toolvisor's user in toolvisor's working directory (config: "bash": {})
  --bash-profile NAME  dsh (default), hyperhive (run, status, kill) or toolnexus (bash,
                       bash_output, kill_shell): whose words the bash tools speak; implies --bash
  --connect ADDR       be a bridge to toolvisor serve at HOST:PORT, a URL, or unix:PATH: no process
                       management here; every turn with the same --session shares its processes
  --token-file FILE    the daemon's bearer token (default STATE_DIR/serve.token)

bounds of the session (docs/decisions/0015-mcp-boundary-bounds.md):
  --max-message-bytes N     the largest message the client may send (default ${MCP_DEFAULT_LIMITS.maxMessageBytes}); a
                            longer one is answered with an error and skipped
  --max-queued-bytes N      output that may wait for a client that does not read it (default
                            ${MCP_DEFAULT_LIMITS.maxQueuedBytes}); progress is dropped first, then the session ends
  --max-concurrent-calls N  calls that run at once (default ${MCP_DEFAULT_LIMITS.maxConcurrentCalls})
  --max-queued-calls N      calls that wait for a place (default ${MCP_DEFAULT_LIMITS.maxQueuedCalls}); more are refused
  --progress-per-second N   progress notifications a second per call (default ${MCP_DEFAULT_LIMITS.progressPerSecond}), after a
  --progress-burst N        burst of N at once (default ${MCP_DEFAULT_LIMITS.progressBurst}); the others are coalesced
  --mail-bytes N            the most bytes of the session's mail (a service's output, a task's end)
                            folded into each tool result (default ${MCP_DEFAULT_LIMITS.mailBytes}); 0 never folds, the model
                            reads it with processes {"command":"wait"}`

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

/** The limits given by flag, each a whole number of at least its `min`. */
function limitsFrom(values: Record<string, unknown>): Partial<McpServerOptions> {
  const limits: Record<string, number> = {}
  for (const [flag, { option, min }] of Object.entries(LIMIT_FLAGS)) {
    const text = values[flag]
    if (typeof text !== 'string') continue
    if (!/^\d{1,15}$/.test(text) || Number(text) < min) {
      const expected = min === 0 ? 'a whole number' : 'a positive whole number'
      throw new CliError('CLI_ERR_USAGE', `--${flag}: expected ${expected}, got "${text.slice(0, 40)}"`)
    }
    limits[option] = Number(text)
  }
  return limits
}

/** The configuration with `--bash` and `--bash-profile` applied (they win over the file's section). */
function withBash(config: Config, values: Record<string, unknown>): Config {
  const profile = values['bash-profile']
  if (values.bash !== true && profile === undefined) return config
  const parsed = BashSection.safeParse({
    ...config.bash,
    enabled: true,
    ...(profile !== undefined ? { profile } : {}),
  })
  if (!parsed.success) {
    throw new CliError(
      'CLI_ERR_USAGE',
      `--bash-profile ${String(profile)}: expected one of ${PROFILES.join(', ')}`,
    )
  }
  return { ...config, bash: parsed.data }
}

/** `toolvisor mcp --toolbox DIR...`: an MCP server over stdio, one session, until stdin closes. */
export async function mcpCommand(
  argv: readonly string[],
  io: Io,
  signals: NodeJS.EventEmitter = process,
): Promise<number> {
  const { values, positionals } = parse(argv, MCP_FLAGS, MCP_USAGE)
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
  if (typeof values.connect === 'string') {
    return bridgeCommand(
      {
        connect: values.connect,
        session: values.session,
        tokenFile: values['token-file'],
        stateDir: values['state-dir'],
      },
      io,
      signals,
    )
  }
  const config = withBash(configFrom(values), values)
  const limits = limitsFrom(values)
  if (config.toolboxes.length === 0 && config.capabilities.length === 0 && !config.bash?.enabled) {
    io.err(
      `toolvisor mcp: nothing to serve: pass --toolbox DIR or --bash, or toolboxes, capabilities or bash in --config FILE\n`,
    )
    return 2
  }
  checkToolboxes(config.toolboxes, values['allow-empty'] === true) // missing or no tool: exit 2, before serving
  const session = typeof values.session === 'string' ? values.session : undefined
  return serveLocal(config, limits, { session, loadFirst: values['load-first'] === true }, io, signals)
}

/** Composes a runtime here and serves it over stdio until the client goes. */
async function serveLocal(
  config: Config,
  limits: Partial<McpServerOptions>,
  { session, loadFirst }: { readonly session: string | undefined; readonly loadFirst: boolean },
  io: Io,
  signals: NodeJS.EventEmitter,
): Promise<number> {
  // Unless --load-first, the toolboxes are loaded once the server answers: a describe that hangs
  // must not hold `initialize` (the registry announces the tools as they come). Capabilities stay
  // in compose: a required one with no backend still stops the command before it serves.
  const composed = await compose({ ...config, toolboxes: [] })
  reportLost(composed, (line) => io.err(`${line}\n`))
  const stop = new AbortController()
  const onSignal = () => stop.abort()
  signals.on('SIGINT', onSignal)
  signals.on('SIGTERM', onSignal)
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
      log: (line) => io.err(`${line}\n`),
      sessions: composed.sessions,
      mailbox: composed.mailbox,
      tasks: composed.tasks,
      ...(config.mailBytes !== undefined ? { mailBytes: config.mailBytes } : {}),
      origin: 'mcp-stdio',
      firstLoad,
      ...(session !== undefined ? { sessionId: session } : {}),
      ...limits,
    })
    loading ??= loadToolboxes(composed, config.toolboxes, io)
    void loading.finally(markLoaded)
    await serving
    return 0
  } finally {
    signals.off('SIGINT', onSignal)
    signals.off('SIGTERM', onSignal)
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
    io.err(`toolvisor: loading the toolboxes failed: ${explain(error)}\n`)
    return undefined
  }
}
