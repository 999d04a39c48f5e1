/**
 * The requests of MCP Tasks (protocol 2025-11-25), served by hand over the task registry: the v2
 * SDK dropped the task store the v1 SDK served them from. Each answers as the v1 SDK did (the same
 * results, the same refusals), for the connection's session only.
 */
import {
  type CallToolRequest,
  type CallToolResult,
  type CreateTaskResult,
  type InputRequiredResult,
  type JSONRPCRequest,
  ProtocolError,
  ProtocolErrorCode,
  type Result,
  Server,
  type ServerContext,
  type Task,
  type Transport,
} from '@modelcontextprotocol/server'
import type { ReadBack } from '@toolvisor/answers'
import { type TaskInfo, type TaskRegistry, TasksError, TasksErrorCodes } from '@toolvisor/tasks'
import { z } from 'zod'
import { ClientIds } from './client-ids.js'
import { speaksModern } from './era.js'
import { messageOf, toCallToolResult } from './result.js'
import { fromRegistry, mcpTask, TASK_POLL_MS, type TaskAnswers } from './tasks.js'

/** A tasks page (`tasks/list`) holds this many. */
const PAGE = 100

/** Where a task's result says which task it is the result of. */
const RELATED_TASK_META_KEY = 'io.modelcontextprotocol/related-task'

const TASK_PARAMS = z.looseObject({ taskId: z.string() })
const LIST_PARAMS = z.looseObject({ cursor: z.string().optional() })

type Handler = (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>

/**
 * The SDK server, letting a task-augmented `tools/call` answer with its task (`{ task }`): the SDK
 * checks every `tools/call` result against `CallToolResult` and refuses one without `content`,
 * which a 2025 task creation result never has. Every other call is checked as before. Whatever
 * connects it (`createSurface`, or the SDK's `serveStdio` with the channel it makes for the
 * connection), the client's request ids are replaced by ours on the way in (`ClientIds`).
 */
export class TaskServer extends Server {
  override connect(transport: Transport): Promise<void> {
    return super.connect(new ClientIds(transport))
  }

  protected override _wrapHandler(method: string, handler: Handler): Handler {
    const wrapped = super._wrapHandler(method, handler)
    if (method !== 'tools/call') return wrapped
    return (request, ctx) => {
      if (request.params?.task === undefined) return wrapped(request, ctx)
      if (speaksModern(this)) {
        // A 2026-07-28 call has no `task`: under the Tasks extension the server decides, and a
        // client does not ask (SEP-2663). The parameter is ignored, as any unknown one is.
        const { task: _, ...params } = request.params
        return wrapped({ ...request, params }, ctx)
      }
      return handler(request, ctx)
    }
  }

  /** Serves `tools/call`, whose answer to a task-augmented call is its task. */
  serveToolCalls(
    handler: (
      request: CallToolRequest,
      ctx: ServerContext,
    ) => Promise<CallToolResult | CreateTaskResult | InputRequiredResult>,
  ): void {
    // The SDK types a tools/call answer as a CallToolResult only; `_wrapHandler` above lets the
    // task through, the SDK's own seam takes `input_required`, and nothing else reads the type.
    this.setRequestHandler(
      'tools/call',
      handler as (request: CallToolRequest, ctx: ServerContext) => Promise<CallToolResult>,
    )
  }
}

/** What the tasks of one connection are read from. */
export interface TaskRequestsOptions {
  readonly tasks: TaskRegistry
  readonly answers: TaskAnswers
  /** The toolvisor session: whatever MCP session asks, only its tasks are seen. */
  readonly session: string
  readonly readBack?: ReadBack | undefined
}

/**
 * Serves `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` from the registry, as seen by
 * one session. A task of another session is refused with the registry's own words; an unknown one
 * is not found.
 */
export function serveTasks(server: Server, options: TaskRequestsOptions): void {
  const view = sessionView(options)
  server.setRequestHandler('tasks/get', { params: TASK_PARAMS }, async ({ taskId }) => {
    const task = view.get(taskId)
    if (task === undefined) throw invalid('Failed to retrieve task: Task not found')
    return task
  })
  server.setRequestHandler('tasks/result', { params: TASK_PARAMS }, async ({ taskId }, ctx) => {
    const result = await view.result(taskId, ctx.mcpReq.signal)
    return { ...result, _meta: { ...result._meta, [RELATED_TASK_META_KEY]: { taskId } } }
  })
  server.setRequestHandler('tasks/list', { params: LIST_PARAMS }, async ({ cursor }) => {
    try {
      return { ...view.list(cursor), _meta: {} }
    } catch (error) {
      throw invalid(`Failed to list tasks: ${messageOf(error)}`)
    }
  })
  server.setRequestHandler('tasks/cancel', { params: TASK_PARAMS }, async ({ taskId }) => {
    try {
      return { _meta: {}, ...(await view.cancel(taskId)) }
    } catch (error) {
      if (error instanceof ProtocolError) throw error
      throw new ProtocolError(ProtocolErrorCode.InvalidRequest, `Failed to cancel task: ${messageOf(error)}`)
    }
  })
}

/** The registry as one session sees it, in the protocol's terms. */
function sessionView(options: TaskRequestsOptions) {
  const { tasks, answers, session, readBack } = options
  const find = (id: string): TaskInfo | undefined => findTask(options, id)
  /** A task whose end a listing or a status shows: seen by the session (`tasks.seen`). */
  const shown = (task: Task): Task => {
    if (isTerminal(task)) tasks.seen(task.taskId, session)
    return task
  }
  const get = (id: string): Task | undefined => {
    const info = find(id)
    return info === undefined ? undefined : shown(mcpTask(info))
  }
  return {
    get,
    /** The task's answer once it has ended: the one its call handed over, else the registry's. */
    async result(id: string, signal: AbortSignal): Promise<CallToolResult> {
      for (;;) {
        const task = get(id)
        if (task === undefined) throw invalid(`Task not found: ${id}`)
        if (isTerminal(task)) break
        await pause(TASK_POLL_MS, signal)
      }
      const answer = answers.get(session, id)
      const info = find(id)
      if (info === undefined) throw invalid(`Task not found: ${id}`)
      const result = answer ? toCallToolResult(await answer) : fromRegistry(info, readBack)
      // The client now holds the end: its completion mail is no news any more (decision 0104).
      tasks.seen(id, session)
      return result
    },
    list(cursor: string | undefined): { tasks: Task[]; nextCursor?: string } {
      const from = cursor === undefined ? 0 : Number(cursor)
      if (!Number.isSafeInteger(from) || from < 0)
        throw new Error(`cursor ${JSON.stringify(cursor)} is not one this server gave`)
      const mine = tasks.list(session)
      const page = mine.slice(from, from + PAGE).map((info) => shown(mcpTask(info)))
      return from + PAGE < mine.length ? { tasks: page, nextCursor: String(from + PAGE) } : { tasks: page }
    },
    async cancel(id: string): Promise<Task> {
      const task = get(id)
      if (task === undefined) throw invalid(`Task not found: ${id}`)
      if (isTerminal(task)) throw invalid(`Cannot cancel task in terminal status: ${task.status}`)
      await tasks.cancel(id, session)
      const cancelled = get(id)
      if (cancelled === undefined) throw invalid(`Task not found after cancellation: ${id}`)
      return cancelled
    },
  }
}

/**
 * The registry task `id` as the session sees it: undefined when there is none; one of another
 * session is refused (`-32602`) with the registry's own words.
 */
export function findTask({ tasks, session }: TaskRequestsOptions, id: string): TaskInfo | undefined {
  try {
    return tasks.get(id, session)
  } catch (error) {
    if (TasksError.is(error) && error.code === TasksErrorCodes.UNKNOWN_TASK) return undefined
    if (TasksError.is(error)) throw invalid(error.message)
    throw error
  }
}

function isTerminal(task: Task): boolean {
  return task.status === 'completed' || task.status === 'failed' || task.status === 'cancelled'
}

/** Waits `ms`; a cancelled request stops waiting with the refusal the v1 SDK gave. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const cancelled = () => new ProtocolError(ProtocolErrorCode.InvalidRequest, 'Request cancelled')
    if (signal.aborted) return reject(cancelled())
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    const onAbort = (): void => {
      clearTimeout(timer)
      reject(cancelled())
    }
    signal.addEventListener('abort', onAbort, { once: true })
  })
}

/** A `-32602` refusal saying `message`. */
export function invalid(message: string): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, message)
}
