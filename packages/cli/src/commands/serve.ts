import { join } from 'node:path'
import { type Mailbox, MailboxToken } from '@toolvisor/mailbox'
import { type Listen, type ServeHttpOptions, serveHttp } from '@toolvisor/mcp-server'
import { type OperatorPage, operatorPage } from '@toolvisor/operator-ui'
import { defaultStateDir, type OwnPathOption, trustStateDir } from '@toolvisor/process-runtime'
import { adoptKept, ModesToken } from '@toolvisor/toolbox'
import type { Config } from '../config.js'
import { CliError } from '../errors.js'
import { type Composed, compose, defined, reportLost, sessionBounds } from '../internal/compose.js'
import { configFileOf, configOf, parseLine, usageOf } from '../internal/flags.js'
import { withShutdownSignals } from '../internal/signals.js'
import { tokenIn } from '../internal/token.js'
import { VERSION } from '../internal/version.js'
import { startNotifier } from '../notify/notifier.js'
import { type NotifyTarget, notifyTargetOf } from '../notify/target.js'
import { type Io, logTo } from '../output.js'

/** `toolvisor serve --help`. */
export const SERVE_USAGE = usageOf(
  'serve',
  `usage: toolvisor serve --listen 127.0.0.1:PORT|unix:PATH [--token-file FILE] [flags]

Serves the tools to MCP clients over Streamable HTTP (at /mcp), as a daemon whose processes
outlive the clients, in MCP 2025-11-25 and 2026-07-28 alike: a client names its toolvisor session
with the x-toolvisor-session header (required in 2026-07-28; in 2025-11-25 its MCP session is one
otherwise, and it comes back with its Mcp-Session-Id). A session is kept when the client goes away,
and ended after --session-ttl of idleness unless it owns running processes. Every request needs
Authorization: Bearer <token>. SIGTERM or SIGINT stops every process with its declared cancel and
exits 0; with --keep-processes, services, stream tasks and background bash commands run on, each
held by its keeper, and the next serve on the same state directory re-adopts them. The operator page, at /ui on the same listener, shows every session and its processes
live in a browser (log in with the token); read-only unless --ui-control.`,
)

/** `toolvisor serve`: the HTTP daemon, until SIGTERM or SIGINT. */
export async function serveCommand(
  argv: readonly string[],
  io: Io,
  signals: NodeJS.EventEmitter = process,
): Promise<number> {
  const { values } = parseLine('serve', argv, SERVE_USAGE)
  if (values.help) {
    io.out(`${SERVE_USAGE}\n`)
    return 0
  }
  const config = configOf('serve', values)
  const serve = config.serve ?? {}
  const listen = listenOf(serve.listen, serve.allowRemote === true, io)
  // Checked before the token is made in it (a RuntimeError naming what is wrong and the fix).
  const stateDir = trustStateDir(config.stateDir ?? defaultStateDir())
  const tokenFile = serve.tokenFile ?? join(stateDir, 'serve.token')
  const token = tokenIn(tokenFile, serve.tokenFile !== undefined)
  // Checked where it was written (the flag, serve.notify in the file): a target by now.
  const notify = serve.notify === undefined ? undefined : notifyTargetOf(serve.notify)
  // Log lines quote tool names, commands and client-supplied session names: escaped (decision 0093).
  const log = logTo(io)
  // Listened for from here on: a signal during the start stops the daemon once it started, with 0.
  const stop = withShutdownSignals(signals)
  const keep = serve.keepProcesses
    ? { ...(serve.keeperReapSeconds ? { reapAfterMs: serve.keeperReapSeconds * 1000 } : {}) }
    : undefined
  const composed = await compose(config, {
    mailJournal: join(stateDir, 'mail'),
    configFile: configFileOf(values),
    ownPaths: servedPaths(tokenFile, listen, notify),
    ...(keep ? { keep } : {}),
  }).catch((error: unknown) => {
    stop.off()
    throw error
  })
  reportLost(composed, log)
  if (keep) await readopt(composed, log)
  const notifier =
    notify && startNotifier({ target: notify, tasks: composed.tasks, mailbox: composed.mailbox, log })
  const control = serve.uiControl === true
  const page = operatorPage({ token, tokenFile, control, log, ...composed, ...mailOf(composed) })
  try {
    const http = await serveHttp(composed.tools, httpOptions(composed, config, { listen, token, log, page }))
    announce(io, { url: http.url, tools: composed.tools.list().length, tokenFile, control })
    await stop.stopped
    io.err(
      keep
        ? 'toolvisor: stopping: kept processes run on with their keepers; every other process gets its declared cancel\n'
        : 'toolvisor: stopping: every process gets its declared cancel\n',
    )
    await http.close()
    return 0
  } finally {
    page.close()
    await composed.kernel.dispose()
    // After the processes' ends: their last items go before the exit (bounded).
    await notifier?.close()
    stop.off()
  }
}

/** `serveHttp`'s options: the composed services, the listener, the bounds, the operator page at `/ui`. */
function httpOptions(
  composed: Composed,
  config: Config,
  at: {
    readonly listen: Listen
    readonly token: string
    readonly log: (line: string) => void
    readonly page: OperatorPage
  },
): ServeHttpOptions {
  return {
    name: 'toolvisor',
    version: VERSION,
    listen: at.listen,
    token: at.token,
    sessions: composed.sessions,
    mailbox: composed.mailbox,
    ...(composed.readBack ? { readBack: composed.readBack } : {}),
    ...(composed.approvals ? { approvals: composed.approvals } : {}),
    tasks: composed.tasks,
    ...httpBounds(config),
    allowedOrigins: config.serve?.allowOrigins ?? [],
    workspaces: config.serve?.workspaces ?? [],
    ownsRunning: (session) => composed.tasks.all().some((t) => t.owner === session && t.exit === undefined),
    log: at.log,
    routes: new Map([['/ui', at.page]]),
  }
}

/** What `serve` adds to toolvisor's own paths: the token file, the socket it listens on, the harness's socket. */
function servedPaths(tokenFile: string, listen: Listen, notify: NotifyTarget | undefined): OwnPathOption[] {
  return [
    { path: tokenFile, kind: 'secret', what: "toolvisor serve's bearer token" },
    ...('path' in listen
      ? [{ path: listen.path, kind: 'secret' as const, what: "toolvisor serve's socket" }]
      : []),
    ...(notify?.kind === 'unix'
      ? [{ path: notify.path, kind: 'secret' as const, what: "the harness's notify socket" }]
      : []),
  ]
}

/** The lines that say the daemon serves, and where. */
function announce(
  io: Io,
  at: { readonly url: string; readonly tools: number; readonly tokenFile: string; readonly control: boolean },
): void {
  io.err(`toolvisor: serving ${at.tools} tools at ${at.url} (bearer token in ${at.tokenFile})\n`)
  if (at.url.startsWith('http'))
    io.err(
      `toolvisor: operator page at ${at.url.replace(/\/mcp$/, '/ui')} (${at.control ? 'control: stop and end allowed' : 'read-only'})\n`,
    )
}

/** The bounds of the listener and of each session, from the configuration (absent: the server's defaults). */
function httpBounds(config: Config) {
  const { sessionTtlSeconds, maxSessions, maxBodyBytes, headersTimeoutMs, requestTimeoutMs } =
    config.serve ?? {}
  return defined({
    ...sessionBounds(config),
    mailBytes: config.mailBytes,
    sessionTtlMs: sessionTtlSeconds === undefined ? undefined : sessionTtlSeconds * 1000,
    maxSessions,
    maxBodyBytes,
    headersTimeoutMs,
    requestTimeoutMs,
  })
}

/** The mailbox, when this composition has one (the page then shows how much mail waits). */
function mailOf(composed: Composed): { mail?: Mailbox } {
  const mail = composed.kernel.get(MailboxToken)
  return mail ? { mail } : {}
}

/** `--listen` as a listener; anything but loopback or a unix socket needs `--allow-remote`. */
function listenOf(text: string | undefined, remote: boolean, io: Io): Listen {
  if (text === undefined) {
    throw new CliError(
      'CLI_ERR_USAGE',
      `--listen is required (or serve.listen in --config FILE)\n\n${SERVE_USAGE}`,
    )
  }
  if (text.startsWith('unix:')) return { path: text.slice(5) }
  const match = /^(\[[0-9a-fA-F:]+\]|[^:]+):(\d{1,5})$/.exec(text)
  const port = Number(match?.[2])
  if (!match || port > 65535) {
    throw new CliError('CLI_ERR_USAGE', `--listen ${text}: expected HOST:PORT (127.0.0.1:8765) or unix:PATH`)
  }
  const host = match[1]!.replace(/^\[|\]$/g, '')
  const loopback = host === '127.0.0.1' || host === '::1' || host === 'localhost'
  if (!loopback && !remote) {
    throw new CliError(
      'CLI_ERR_USAGE',
      `--listen ${text}: not a loopback address; pass --allow-remote to listen there (only the token guards it)`,
    )
  }
  if (!loopback)
    io.err(`toolvisor: warning: listening on ${host}, beyond this machine: only the bearer token guards it\n`)
  return { host: host === 'localhost' ? '127.0.0.1' : host, port }
}

/** Gives every kept process an earlier serve left back to its session (decision 0113), and says so. */
async function readopt(composed: Composed, log: (line: string) => void): Promise<void> {
  const modes = composed.kernel.get(ModesToken)
  if (modes === undefined) return
  for (const { record, outcome, why } of await adoptKept(composed.runtime, modes, composed.binary.served())) {
    const what = `${record.task ?? record.tool} (${record.tool}, pid ${record.pid}) of session ${record.session ?? '-'}`
    log(outcome === 'adopted' ? `re-adopted kept ${what}` : `stopped kept ${what}: ${why}`)
  }
}
