import { join, resolve } from 'node:path'
import { type Mailbox, MailboxToken } from '@toolvisor/mailbox'
import { type Listen, serveHttp } from '@toolvisor/mcp-server'
import { operatorPage } from '@toolvisor/operator-ui'
import { defaultStateDir } from '@toolvisor/process-runtime'
import { type Composed, compose, reportLost } from '../compose.js'
import type { Config } from '../config.js'
import { CliError } from '../errors.js'
import { configFrom, parse, RUNTIME_FLAGS, RUNTIME_FLAGS_HELP } from '../flags.js'
import { startNotifier } from '../notify/notifier.js'
import { type NotifyTarget, notifyTargetOf } from '../notify/target.js'
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
  --notify unix:PATH|URL push the harness one keyed item per task (running, done, clear): JSON lines
                         over a unix stream socket, or a JSON POST per item to an http(s) URL
${RUNTIME_FLAGS_HELP}`

const SERVE_FLAGS = {
  ...RUNTIME_FLAGS,
  listen: { type: 'string' },
  'token-file': { type: 'string' },
  'allow-origin': { type: 'string', multiple: true },
  'allow-remote': { type: 'boolean' },
  'session-ttl': { type: 'string' },
  'ui-control': { type: 'boolean' },
  notify: { type: 'string' },
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
  const ttl = ttlOf(values['session-ttl'])
  const config = configFrom(values)
  const tokenFile = resolve(values['token-file'] ?? join(config.stateDir ?? defaultStateDir(), 'serve.token'))
  const token = tokenIn(tokenFile, values['token-file'] !== undefined)
  const notify = notifyOf(values.notify, config)
  const log = (line: string) => io.err(`${line}\n`)
  // Listened for from here on: a signal during the start stops the daemon once it started, with 0.
  const stop = signalled(signals)
  const composed = await compose(config, {
    mailJournal: join(config.stateDir ?? defaultStateDir(), 'mail'),
  }).catch((error: unknown) => {
    stop.off()
    throw error
  })
  reportLost(composed, log)
  const notifier =
    notify && startNotifier({ target: notify, tasks: composed.tasks, mailbox: composed.mailbox, log })
  const control = values['ui-control'] === true
  const page = operatorPage({ token, control, log, ...composed, ...mailOf(composed) })
  try {
    const http = await serveHttp(composed.tools, {
      name: 'toolvisor',
      version: VERSION,
      listen,
      token,
      sessions: composed.sessions,
      mailbox: composed.mailbox,
      ...(composed.approvals ? { approvals: composed.approvals } : {}),
      ...(config.mailBytes !== undefined ? { mailBytes: config.mailBytes } : {}),
      allowedOrigins: values['allow-origin'] ?? [],
      ownsRunning: (session) => composed.tasks.all().some((t) => t.owner === session && t.exit === undefined),
      ...ttl,
      log,
      routes: new Map([['/ui', page]]),
    })
    announce(io, { url: http.url, tools: composed.tools.list().length, tokenFile, control })
    await stop.signal
    io.err('toolvisor: stopping: every process gets its declared cancel\n')
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

/** SIGINT or SIGTERM, listened for until `off` (a second one during the shutdown changes nothing). */
function signalled(signals: NodeJS.EventEmitter): { readonly signal: Promise<void>; off(): void } {
  let stop = () => {}
  const signal = new Promise<void>((resolve) => {
    stop = resolve
  })
  for (const name of ['SIGINT', 'SIGTERM']) signals.on(name, stop)
  return {
    signal,
    off: () => {
      for (const name of ['SIGINT', 'SIGTERM']) signals.off(name, stop)
    },
  }
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

/** `--session-ttl` as serveHttp's option. */
function ttlOf(text: string | undefined): { sessionTtlMs?: number } {
  const ttl = secondsOf(text)
  return ttl !== undefined ? { sessionTtlMs: ttl * 1000 } : {}
}

/** `--notify`, else the configuration file's `notify`: where the harness's keyed items go. */
function notifyOf(flag: string | undefined, config: Config): NotifyTarget | undefined {
  const text = flag ?? config.notify
  if (text === undefined) return undefined
  const target = notifyTargetOf(text)
  if (target === undefined) {
    throw new CliError(
      'CLI_ERR_USAGE',
      `--notify ${text.slice(0, 200)}: expected unix:PATH (a unix stream socket) or an http:// or https:// URL`,
    )
  }
  return target
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
