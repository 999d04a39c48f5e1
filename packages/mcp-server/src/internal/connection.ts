import { randomUUID } from 'node:crypto'
import type { ConnectionId, ToolRegistry } from '@toolvisor/toolbox'
import type { McpServerOptions } from '../server.js'
import { ToolAnnouncer } from './announcer.js'
import { callHandler } from './call-handler.js'
import type { ProtocolEra } from './era.js'
import { Inflight } from './inflight.js'
import { firstLoadOf } from './lifecycle.js'
import { noticeMail, type SessionMailOptions, watchMail } from './mail.js'
import { MAIL_URI, serveMailResource } from './mail-resource.js'
import { parseOptions } from './options.js'
import { messageOf } from './result.js'
import { notedCalls, notedClient } from './session-notes.js'
import { stderrLog } from './stderr-log.js'
import type { TaskServer } from './task-requests.js'
import type { TaskAnswers } from './tasks.js'
import { sdkServer, serveTools } from './tools-surface.js'

/**
 * One connection's SDK server, with its tools served and its calls tracked, and what the
 * connection's life sets up. It is built apart from any transport: `createSurface` connects it to
 * the one it is given, and an SDK entry that asks a factory for each connection (`serveStdio(factory)`
 * of decision 0109) can take `server` as the factory's answer once `start` has run.
 */
export interface ConnectionServer {
  readonly server: TaskServer
  readonly sessionId: string
  readonly connection: ConnectionId
  readonly inflight: Inflight
  /** Logs one line, prefixed with the server name. */
  readonly log: (line: string) => void
  /**
   * Opens the session (the open one again, when `sessionId` names one) and starts what tells the
   * client: the mail notice, the approvals' attachment, the tool announcer. `quiet`: the
   * connection's log told what is served already (another server of the same connection did).
   * `announce: false`: changes are not told through this server (a 2026-07-28 HTTP request's
   * server, whose handler publishes them to every listen subscription).
   */
  start(options?: { readonly quiet?: boolean; readonly announce?: boolean }): void
  /** Undoes what `start` set up; the session itself ends elsewhere (`endSession`). Idempotent. */
  stop(): void
}

/**
 * Builds the SDK server of one connection of `tools`, for a client of `era`. A modern one is served
 * the tools, the mail folded into results and as the resource `toolvisor://mail` (not the 2025
 * logging notice), the Tasks extension instead of the 2025 tasks (decision 0109, points 4 and 5),
 * and each of its calls asks the user by an `input_required` round of its own.
 */
export function connectionServer(
  tools: ToolRegistry,
  options: McpServerOptions,
  answers: TaskAnswers,
  era: ProtocolEra = 'legacy',
): ConnectionServer {
  const limits = parseOptions('createMcpServer', options)
  const write = options.log ?? stderrLog
  const log = (line: string): void => write(`${options.name}: ${line}`)
  const sessionId = options.sessionId ?? `mcp-${randomUUID()}`
  // Made here, never from what a client sends: no other connection can name it.
  const connection: ConnectionId = Symbol(`mcp connection of session ${sessionId}`)
  const mail = options.mailbox
    ? { mailbox: options.mailbox, sessionId, mailBytes: limits.mailBytes, log, readBack: options.readBack }
    : undefined
  const tasks = options.tasks ? { registry: options.tasks, answers } : undefined
  const server = sdkServer(options, tools, tasks && { ...tasks, session: sessionId }, era)
  if (mail && era === 'modern') serveMailResource(server, mail)
  const inflight = new Inflight()
  const rounds = era === 'modern' ? options.approvals : undefined
  const handled = callHandler({ tools, sessionId, connection, limits, log, mail, tasks, rounds, era })
  const handle = notedCalls(handled, options.sessions, sessionId)
  // The 2025 tasks say in the list which tools may run as one; the 2026 extension has no such field.
  const listed = { tools, tasks: tasks !== undefined && era === 'legacy' }
  serveTools(server, inflight, handle, listed, firstLoadOf(options))
  const firstLoad = options.firstLoad ? { firstLoad: options.firstLoad } : {}
  const announcer = new ToolAnnouncer({
    tools,
    server,
    sessionId,
    log,
    modern: era === 'modern',
    ...firstLoad,
  })
  notedClient(server, options.sessions, sessionId)
  // What starting set up and stopping undoes: the mail watch, the approvals' attachment.
  const undo: Array<() => void> = []
  return {
    server,
    sessionId,
    connection,
    inflight,
    log,
    start(how) {
      options.sessions?.open({
        id: sessionId,
        origin: options.origin ?? 'mcp',
        ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
      })
      if (mail && era === 'legacy') undo.push(noticeMail({ ...mail, server }))
      // A 2026-07-28 stdio connection: its listen subscriptions hear of mail through the resource.
      if (mail && era === 'modern' && how?.announce !== false) undo.push(noticeMailResource(server, mail))
      if (options.approvals && era === 'legacy')
        undo.push(options.approvals.attach({ connection, sessionId, server }))
      if (how?.announce !== false) announcer.start(how?.quiet)
    },
    stop() {
      announcer.stop()
      for (const step of undo.splice(0)) step()
    },
  }
}

/** Tells the connection's listen subscriptions of `toolvisor://mail` when mail arrives. */
function noticeMailResource(server: TaskServer, mail: SessionMailOptions): () => void {
  return watchMail(
    mail.mailbox,
    mail.sessionId,
    () => {
      server
        .sendResourceUpdated({ uri: MAIL_URI })
        .catch((error: unknown) => mail.log(`mail notice not sent: ${messageOf(error)}`))
    },
    mail.readBack,
  )
}
