import { randomBytes } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Route } from '@toolvisor/mcp-server'
import type { Sessions, TaskRegistry } from '@toolvisor/tasks'
import { type Asset, loadAssets } from './assets.js'
import { ACTIONS_KEPT, act, type ControlContext } from './control.js'
import { UiError } from './errors.js'
import { pageCsp, peerOf, send, sendText, tokenFileFor } from './http.js'
import { StateHub } from './internal/live.js'
import { logIn, loginForm } from './internal/login.js'
import { clearedCookie, Logins } from './internal/logins.js'
import type { EventStream } from './internal/sse.js'
import {
  eventPage,
  type ReadContext,
  recordingFile,
  stateStream,
  stderrPage,
  tailStream,
} from './internal/streams.js'
import { type ActionView, type MailView, type RestartsOf, reportedRestarts, snapshot } from './snapshot.js'

/** What the operator page shows and acts on. */
export interface OperatorPageOptions {
  /** The bearer token of `serve`: the login form takes it, a request may carry it instead of a login. */
  readonly token: string
  readonly sessions: Sessions
  readonly tasks: TaskRegistry
  /**
   * Allow stopping processes, ending sessions and typing into a terminal task (`--ui-control`).
   * Default false: read-only.
   */
  readonly control?: boolean
  /** Where logins and actions are logged (who and when). Default: stderr. */
  readonly log?: (line: string) => void
  /** The mailbox, when composed: how much mail waits per session and per process. */
  readonly mail?: MailView
  /** A service's restarts. Default: what the process reports (`restarts`, or `facts().restarts`). */
  readonly restartsOf?: RestartsOf
  /** How long a login lives unused. Default 12 h. */
  readonly loginIdleMs?: number
  /** Event streams open at once at most (pages and tails). Default 32. */
  readonly maxStreams?: number
  /** Where the token is (`serve.token`, or `--token-file`): the login form names it to a browser on this machine. */
  readonly tokenFile?: string
}

/** The `/ui` route of `serveHttp`, and its `close` (ends every stream, unhooks from the registries). */
export interface OperatorPage extends Route {
  close(): void
}

interface Context extends ReadContext, ControlContext {
  readonly token: string
  readonly tokenFile: string | undefined
  readonly logins: Logins
  readonly assets: ReadonlyMap<string, Asset>
}

/**
 * The operator's page, as a route of `serveHttp` mounted at `/ui`: sessions and their tasks, live,
 * a tail of one process, and (with `control`) stop and end. Every answer but the login form's POST
 * needs the bearer token or a login made with it; every answer carries a strict CSP.
 *
 * @example
 * ```ts
 * const page = operatorPage({ token, sessions, tasks, control: false })
 * const http = await serveHttp(tools, { ...options, token, routes: new Map([['/ui', page]]) })
 * // ... later
 * await http.close()
 * page.close()
 * ```
 */
export function operatorPage(options: OperatorPageOptions): OperatorPage {
  if (typeof options.token !== 'string' || options.token.length < 16)
    throw new UiError('UI_ERR_INVALID_OPTIONS', 'operatorPage: options.token: must be at least 16 characters')
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`))
  const actions: ActionView[] = []
  const control = options.control === true
  const sources = {
    sessions: options.sessions,
    tasks: options.tasks,
    mail: options.mail,
    restartsOf: options.restartsOf ?? reportedRestarts,
  }
  const hub = new StateHub(() => snapshot(sources, control, actions), options.tasks, options.sessions)
  const streams = new Set<EventStream>()
  const context: Context = {
    token: options.token,
    tokenFile: options.tokenFile,
    tasks: options.tasks,
    sessions: options.sessions,
    control,
    log,
    logins: new Logins(options.loginIdleMs ?? 12 * 3600_000),
    assets: loadAssets(),
    hub,
    streams,
    maxStreams: options.maxStreams ?? 32,
    record(action) {
      actions.push(action)
      if (actions.length > ACTIONS_KEPT) actions.shift()
      hub.push()
    },
  }
  const route = (request: IncomingMessage, response: ServerResponse, bearer: boolean) =>
    handle(context, request, response, bearer)
  return Object.assign(route, {
    close() {
      hub.close()
      for (const stream of [...streams]) stream.close()
    },
  })
}

async function handle(
  context: Context,
  request: IncomingMessage,
  response: ServerResponse,
  bearer: boolean,
): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://localhost')
  const method = request.method ?? 'GET'
  if (url.pathname === '/ui/login' && method === 'POST') return logIn(request, response, context)
  if (url.pathname === '/ui/login.css' && method === 'GET') {
    request.resume()
    const sheet = context.assets.get('login.css')!
    return send(response, 200, sheet.type, sheet.body)
  }
  const login = bearer ? undefined : context.logins.find(request)
  if (!bearer && login === undefined) {
    request.resume()
    if (method === 'GET' && ['/ui', '/ui/', '/ui/login'].includes(url.pathname))
      return loginForm(response, 'first', tokenFileFor(request, context.tokenFile))
    return sendText(response, 401, 'log in at /ui first, or send Authorization: Bearer <token>', {
      'www-authenticate': 'Bearer realm="toolvisor"',
    })
  }
  const who = login ? `${login.name} (${login.from})` : `bearer token (${peerOf(request)})`
  if (method === 'POST') return post(context, url, request, response, who)
  request.resume()
  if (method !== 'GET' && method !== 'HEAD')
    return sendText(response, 405, `${method} is not served here`, { allow: 'GET, HEAD, POST' })
  return get(context, url, request, response, method)
}

async function post(
  context: Context,
  url: URL,
  request: IncomingMessage,
  response: ServerResponse,
  who: string,
): Promise<void> {
  if (url.pathname === '/ui/api/stop') return act(context, 'stop', request, response, who)
  if (url.pathname === '/ui/api/end') return act(context, 'end', request, response, who)
  if (url.pathname === '/ui/api/keys') return act(context, 'keys', request, response, who)
  request.resume()
  if (url.pathname === '/ui/logout') {
    context.logins.close(request)
    context.log(`toolvisor: operator page: ${who} logged out`)
    return send(response, 303, 'text/plain; charset=utf-8', 'logged out\n', {
      location: '/ui',
      'set-cookie': clearedCookie(),
    })
  }
  sendText(response, 404, `nothing to post at ${url.pathname}`)
}

type Read = (
  context: Context,
  url: URL,
  request: IncomingMessage,
  response: ServerResponse,
) => void | Promise<void>

/** The GET routes besides the page's files. */
const READS: ReadonlyArray<readonly [(path: string) => boolean, Read]> = [
  [(path) => path === '/ui/events', (c, _u, _q, r) => stateStream(c, r)],
  [(path) => path.startsWith('/ui/tail/'), tailStream],
  [(path) => path === '/ui/api/page', (c, u, _q, r) => eventPage(c, u, r)],
  [(path) => path === '/ui/api/stderr', (c, u, _q, r) => stderrPage(c, u, r)],
  [(path) => path === '/ui/api/recording', (c, u, _q, r) => recordingFile(c, u, r)],
  [
    (path) => path === '/ui/login',
    (_c, _u, _q, r) => send(r, 303, 'text/plain; charset=utf-8', '', { location: '/ui' }),
  ],
]

async function get(
  context: Context,
  url: URL,
  request: IncomingMessage,
  response: ServerResponse,
  method: string,
): Promise<void> {
  const path = url.pathname
  const read = READS.find(([matches]) => matches(path))
  if (read && method === 'HEAD')
    return sendText(response, 405, `HEAD is not served at ${path}`, { allow: 'GET' })
  if (read) return read[1](context, url, request, response)
  const name = path === '/ui' || path === '/ui/' ? 'index.html' : path.slice('/ui/'.length)
  const asset = context.assets.get(name)
  if (asset === undefined) sendText(response, 404, `not found: ${path}`)
  else if (name === 'index.html') sendPage(response, asset)
  else send(response, 200, asset.type, asset.body)
}

/** The page, with a nonce of its own for the styles its terminal view builds (`pageCsp`). */
function sendPage(response: ServerResponse, page: Asset): void {
  const nonce = randomBytes(16).toString('base64')
  const body = page.body.toString('utf8').replaceAll('__NONCE__', nonce)
  send(response, 200, page.type, body, { 'content-security-policy': pageCsp(nonce) })
}
