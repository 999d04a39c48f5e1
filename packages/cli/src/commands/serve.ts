import { join, resolve } from 'node:path'
import { type Mailbox, MailboxToken } from '@toolvisor/mailbox'
import { type Listen, serveHttp } from '@toolvisor/mcp-server'
import { operatorPage } from '@toolvisor/operator-ui'
import { defaultStateDir } from '@toolvisor/process-runtime'
import { type Composed, compose, reportLost } from '../compose.js'
import { CliError } from '../errors.js'
import { configFrom, parse, RUNTIME_FLAGS, RUNTIME_FLAGS_HELP } from '../flags.js'
import type { Io } from '../output.js'
import { tokenIn } from '../token.js'
import { VERSION } from '../version.js'

export const SERVE_USAGE = `usage: toolvisor serve --listen 127.0.0.1:PORT|unix:PATH [--token-file FILE] [flags]

Serves the tools to MCP clients over Streamable HTTP (at /mcp), as a daemon whose processes
outlive the clients: one toolvisor session per MCP session, kept when the client goes away (it
comes back with its Mcp-Session-Id, or names its session with the x-toolvisor-session header), and
ended after --session-ttl of idleness unless it owns running processes. Every request needs
Authorization: Bearer <token>. SIGTERM or SIGINT stops every process with its declared cancel and
exits 0. The operator page, at /ui on the same listener, shows every session and its processes
live in a browser (log in with the token); read-only unless --ui-control.

  --listen ADDR          127.0.0.1:PORT (loopback; PORT 0 picks one), or unix:PATH (mode 0600)
  --token-file FILE      the bearer token (default: STATE_DIR/serve.token, made with mode 0600 if missing)
  --allow-origin ORIGIN  a browser origin allowed to call (repeatable; the listener's own always is)
  --allow-remote         listen on an address other than loopback (the token is then all that guards it)
  --session-ttl SECONDS  how long an idle session lives (default 900)
  --ui-control           the operator page may stop a process and end a session (each confirmed, logged)
${RUNTIME_FLAGS_HELP}`

const SERVE_FLAGS = {
  ...RUNTIME_FLAGS,
  listen: { type: 'string' },
  'token-file': { type: 'string' },
  'allow-origin': { type: 'string', multiple: true },
  'allow-remote': { type: 'boolean' },
  'session-ttl': { type: 'string' },
  'ui-control': { type: 'boolean' },
} as const

/** `toolvisor serve`: the HTTP daemon, until SIGTERM or SIGINT. */
export async function serveCommand(
  argv: readonly string[],
  io: Io,
  signals: NodeJS.EventEmitter = process,
): Promise<number> {
  const { values } = parse(argv, SERVE_FLAGS, SERVE_USAGE)
  if (values.help) {
    io.out(`${SERVE_USAGE}\n`)
    return 0
  }
  const listen = listenOf(values.listen, values['allow-remote'] === true, io)
  const ttl = secondsOf(values['session-ttl'])
  const config = configFrom(values)
  const tokenFile = resolve(values['token-file'] ?? join(config.stateDir ?? defaultStateDir(), 'serve.token'))
  const token = tokenIn(tokenFile, values['token-file'] !== undefined)
  const composed = await compose(config, { mailJournal: join(config.stateDir ?? defaultStateDir(), 'mail') })
  reportLost(composed, (line) => io.err(`${line}\n`))
  const stopped = new Promise<void>((resolve) => {
    signals.once('SIGINT', resolve)
    signals.once('SIGTERM', resolve)
  })
  const control = values['ui-control'] === true
  const page = operatorPage({
    token,
    sessions: composed.sessions,
    tasks: composed.tasks,
    control,
    log: (line) => io.err(`${line}\n`),
    ...mailOf(composed),
  })
  try {
    const http = await serveHttp(composed.tools, {
      name: 'toolvisor',
      version: VERSION,
      listen,
      token,
      sessions: composed.sessions,
      mailbox: composed.mailbox,
      tasks: composed.tasks,
      ...(config.mailBytes !== undefined ? { mailBytes: config.mailBytes } : {}),
      allowedOrigins: values['allow-origin'] ?? [],
      ownsRunning: (session) => composed.tasks.all().some((t) => t.owner === session && t.exit === undefined),
      ...(ttl !== undefined ? { sessionTtlMs: ttl * 1000 } : {}),
      log: (line) => io.err(`${line}\n`),
      routes: new Map([['/ui', page]]),
    })
    io.err(
      `toolvisor: serving ${composed.tools.list().length} tools at ${http.url} (bearer token in ${tokenFile})\n`,
    )
    if (http.url.startsWith('http'))
      io.err(
        `toolvisor: operator page at ${http.url.replace(/\/mcp$/, '/ui')} (${control ? 'control: stop and end allowed' : 'read-only'})\n`,
      )
    await stopped
    io.err('toolvisor: stopping: every process gets its declared cancel\n')
    await http.close()
    return 0
  } finally {
    page.close()
    await composed.kernel.dispose()
  }
}

/** The mailbox, when this composition has one (the page then shows how much mail waits). */
function mailOf(composed: Composed): { mail?: Mailbox } {
  const mail = composed.kernel.get(MailboxToken)
  return mail ? { mail } : {}
}

/** `--listen` as a listener; anything but loopback or a unix socket needs `--allow-remote`. */
function listenOf(text: string | undefined, remote: boolean, io: Io): Listen {
  if (text === undefined) throw new CliError('CLI_ERR_USAGE', `--listen is required\n\n${SERVE_USAGE}`)
  if (text.startsWith('unix:') && text.length > 5) return { path: resolve(text.slice(5)) }
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

function secondsOf(text: string | undefined): number | undefined {
  if (text === undefined) return undefined
  if (!/^\d{1,7}$/.test(text) || Number(text) < 1) {
    throw new CliError(
      'CLI_ERR_USAGE',
      `--session-ttl: expected a whole number of seconds, at least 1, got "${text.slice(0, 40)}"`,
    )
  }
  return Number(text)
}
