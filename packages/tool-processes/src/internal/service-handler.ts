import { randomBytes } from 'node:crypto'
import type { Mailbox } from '@toolvisor/mailbox'
import type { KeptRecord, ProcessRuntime, StartOptions } from '@toolvisor/process-runtime'
import { ensureSession, type Sessions, type TaskRegistry } from '@toolvisor/tasks'
import {
  argvLabel,
  describeExit,
  handedOver,
  type LoadedTool,
  type ModeCall,
  type ModeHandler,
  succeeded,
  type ToolResult,
  text,
} from '@toolvisor/toolbox'
import { statusOf } from '../answers.js'
import type { RestartPolicy } from '../restart.js'
import type { Handles } from './handles.js'
import { sendTool } from './send-tool.js'
import { Service } from './service.js'
import { serviceMail } from './service-mail.js'

/** What the service mode needs. */
export interface ServiceDeps {
  readonly runtime: ProcessRuntime
  readonly tasks: TaskRegistry
  readonly mailbox: Mailbox
  readonly sessions: Sessions
  readonly handles: Handles
  /** The services not yet ended (stopped at shutdown). */
  readonly live: Set<Service>
}

/** The operator's settings of the service mode. */
export interface ServiceSettings {
  readonly restart: RestartPolicy
  /** How long `send` collects the events the process produces in reply (ms; ruling 14). */
  readonly replyMs: number
  /** The most bytes an answer holds. */
  readonly resultBytes: number
  /** Slugs whose `slug.send` companion is left out (spec D6: a service the model starts but never talks to). */
  readonly omitSend: readonly string[]
}

/**
 * The `service` mode (spec §2.3): a start is a task of the registry (kind `service`) under the
 * session's next handle, and completes at ready with the handle; a start that does not reach ready
 * fails with the output tails and leaves nothing running. A tool that declares `process.input`
 * brings its `slug.send` companion.
 */
export function serviceHandler(deps: ServiceDeps, settings: ServiceSettings): ModeHandler {
  return {
    call: (call) => startService(deps, settings, call),
    adopt: (record, loaded) => adoptService(deps, settings, record, loaded),
    companions(loaded) {
      if (loaded.spec.process.input === undefined || settings.omitSend.includes(loaded.spec.slug)) return []
      return [sendTool(loaded, deps.tasks, settings)]
    },
    tasks: true,
  }
}

async function startService(
  deps: ServiceDeps,
  settings: ServiceSettings,
  call: ModeCall,
): Promise<ToolResult> {
  const session = call.ctx.sessionId
  if (session === undefined) {
    return text(
      `${call.name}: a service needs a session (its output is mail to the session that starts it); ` +
        'call it with a session id; nothing was started',
      true,
    )
  }
  ensureSession(deps.sessions, session)
  let service: Service | undefined
  deps.handles.add(
    session,
    { kind: 'service', tool: call.name, label: argvLabel(call.start.argv) },
    (handle) => {
      service = launch(
        deps,
        settings,
        { name: call.name, loaded: call.loaded, start: call.start },
        { session, handle },
      )
      return service
    },
  )
  if (call.ctx.asTask !== undefined) {
    // Taken as a task (MCP Tasks): the task is the service itself, its answer its end.
    call.ctx.asTask(service!.handle, answerAtEnd(service!, call))
    deps.tasks.detach(service!.handle)
    return handedOver(service!.handle, call.name)
  }
  const answer = await answerAtReady(service!, call)
  // Ready and answered with its handle: the service lives on past this call.
  deps.tasks.detach(service!.handle)
  return answer
}

/** How a service handed over as a task ended: the answer of its task. */
async function answerAtEnd(service: Service, call: ModeCall): Promise<ToolResult> {
  const exit = await service.exit
  const body = {
    process: service.handle,
    tool: call.name,
    status: statusOf(service.lifecycle),
    since: service.startedAt.toISOString(),
    ended: describeExit(exit),
  }
  return {
    ...text(JSON.stringify(body), !succeeded(exit)),
    structuredContent: body,
    meta: { task: service.handle, process: service.id },
  }
}

/** What a service runs: the tool's name and load, and its first run's start. */
interface ServiceStart {
  readonly name: string
  readonly loaded: LoadedTool
  readonly start: StartOptions
}

/**
 * A new service under `handle`, with its mail source; `adopted`: its first run is a kept process
 * an earlier daemon started, re-adopted (decision 0113), its mail source reopened under its name.
 */
function launch(
  deps: ServiceDeps,
  settings: ServiceSettings,
  { name, loaded, start }: ServiceStart,
  { session, handle }: { readonly session: string; readonly handle: string },
  adopted?: KeptRecord,
): Service {
  const { spec } = loaded
  // Kept (the runtime has a keeper): the mail is durable, under a name its keeper's record keeps.
  const keeps = deps.runtime.options.keeping !== undefined
  const durable = adopted ? adopted.mail : keeps ? randomBytes(6).toString('hex') : undefined
  const mail = serviceMail(deps.mailbox, session, handle, spec.process.digest, durable)
  const note = { task: handle, session, kind: 'service', ...(durable ? { mail: durable } : {}) }
  let first = adopted
  try {
    const service = new Service({
      handle,
      tool: name,
      onExit: spec.runtime.onExit,
      restart: settings.restart,
      idleSeconds: spec.runtime.timeout.idle,
      // No signal: a service outlives the call that started it (and, kept, the daemon).
      launch: (onEvent) => {
        const record = first
        first = undefined
        return record
          ? deps.runtime.adopt(record, { ...start, onEvent })
          : deps.runtime.start({ ...start, onEvent, keep: true })
      },
      // A restarted run: its events are numbered after the earlier runs', which a re-adoption cannot count again.
      annotate: (id) => deps.runtime.annotate(id, { ...note, handler: { restarted: true } }),
      waiting: () => deps.runtime.waiting(name, { task: handle, session, kind: 'service' }),
      mail,
      ...(spec.process.input ? { input: spec.process.input.event ?? {} } : {}),
      ...(adopted ? { resumed: (adopted.resumedAt?.length ?? 0) + 1 } : {}),
    })
    if (durable) deps.runtime.annotate(service.id, note)
    deps.live.add(service)
    void service.exit.then(() => deps.live.delete(service))
    return service
  } catch (error) {
    mail.discard()
    throw error
  }
}

/** The handle once the service is ready; the failure, with the output tails, when it never is. */
async function answerAtReady(service: Service, call: ModeCall): Promise<ToolResult> {
  const outcome = await readyOrCancelled(service, call.ctx.signal)
  if (outcome === 'ready') {
    const body = {
      process: service.handle,
      tool: call.name,
      status: statusOf(service.lifecycle),
      since: service.startedAt.toISOString(),
    }
    return {
      ...text(JSON.stringify(body)),
      structuredContent: body,
      meta: { task: service.handle, process: service.id },
    }
  }
  // Whatever way it ended, nothing of it may be left: stop() waits for the exit and the sweep.
  await service.stop({ reason: 'cancelled' })
  if (outcome === 'cancelled')
    return text(`${call.name}: cancelled before ${service.handle} was ready; it was stopped`, true)
  return text(`${call.name}: ${service.handle} did not start: ${outcome.message}`, true, {
    task: service.handle,
  })
}

/** Resolves `ready`, the error of a start that failed, or `cancelled` when the caller gave up. */
function readyOrCancelled(service: Service, signal: AbortSignal): Promise<'ready' | 'cancelled' | Error> {
  return new Promise((resolve) => {
    const onAbort = () => resolve('cancelled')
    if (signal.aborted) return onAbort()
    signal.addEventListener('abort', onAbort, { once: true })
    service.ready.then(
      () => resolve('ready'),
      (error: unknown) => resolve(error instanceof Error ? error : new Error(String(error))),
    )
    void service.ready.catch(() => {}).finally(() => signal.removeEventListener('abort', onAbort))
  })
}

/**
 * Takes a kept service an earlier daemon started over (decision 0113): the same handle in the same
 * session, its first run the kept process, its mail reopened durable, its `send` reaching the same
 * stdin. Throws when the record does not name its session and handle.
 */
function adoptService(
  deps: ServiceDeps,
  settings: ServiceSettings,
  record: KeptRecord,
  loaded: LoadedTool,
): void {
  const { session, task: handle } = record
  if (session === undefined || handle === undefined)
    throw new Error(`kept service ${record.tool} (pid ${record.pid}) names no session or handle`)
  ensureSession(deps.sessions, session)
  const start: StartOptions = {
    tool: loaded.prepared,
    argv: record.argv ?? [],
    stdin: 'open',
    ...(record.cwd ? { cwd: record.cwd } : {}),
  }
  const what = { name: loaded.spec.slug, loaded, start }
  // The readers' cursors count the events of its runs before this one when it restarted: then they start again.
  const cursors = record.cursors && record.handler?.restarted !== true ? { cursors: record.cursors } : {}
  const label = record.argv ? { label: argvLabel(record.argv) } : {}
  const task = { kind: 'service' as const, tool: loaded.spec.slug, ...label, ...cursors }
  deps.handles.adopt(session, handle, task, () => launch(deps, settings, what, { session, handle }, record))
  deps.tasks.detach(handle)
}
