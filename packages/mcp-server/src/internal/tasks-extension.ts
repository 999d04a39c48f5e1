/**
 * The Tasks extension of MCP 2026-07-28 (`io.modelcontextprotocol/tasks`, SEP-2663) over the task
 * registry (decision 0109, point 5), written by hand until the SDK has it: a call the server takes
 * as a task answers `resultType: "task"` with the registry task; `tasks/get` polls it (its final
 * `CallToolResult` inlined once it ended), `tasks/cancel` stops it with its declared cancel,
 * `tasks/update` is acknowledged (a toolvisor task never asks for input while it runs: an
 * escalation is asked before the task exists). Each request sees its own session's tasks only.
 */
import {
  type CallToolResult,
  CLIENT_CAPABILITIES_META_KEY,
  MissingRequiredClientCapabilityError,
  type Server,
  type ServerContext,
} from '@modelcontextprotocol/server'
import type { TaskInfo } from '@toolvisor/tasks'
import { describeExit } from '@toolvisor/toolbox'
import * as z from 'zod/v4'
import { toCallToolResult } from './result.js'
import { findTask, invalid, type TaskRequestsOptions } from './task-requests.js'
import { fromRegistry, TASK_POLL_MS } from './tasks.js'

/** The extension's identifier, in capabilities on both sides. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks'

const TASK_PARAMS = z.looseObject({ taskId: z.string() })

/** A task as the extension shows it (`Task`). */
export interface ExtensionTask {
  readonly taskId: string
  readonly status: 'working' | 'completed' | 'cancelled'
  readonly statusMessage: string
  readonly createdAt: string
  readonly lastUpdatedAt: string
  readonly ttlMs: null
  readonly pollIntervalMs: number
}

/** Whether the request declares the extension in its capabilities (the only way a task is made). */
export function declaresTasks(ctx: ServerContext): boolean {
  const envelope = ctx.mcpReq.envelope as Record<string, { extensions?: object } | undefined> | undefined
  const extensions = envelope?.[CLIENT_CAPABILITIES_META_KEY]?.extensions
  return extensions !== undefined && TASKS_EXTENSION in extensions
}

/**
 * The extension's view of a registry task. An ended task is `completed` (its result says how it
 * ended, `isError` for anything but a clean exit) or `cancelled`; `failed` is for a JSON-RPC error
 * only, which a started toolvisor task never has. Kept as long as the registry keeps ended tasks.
 */
export function extensionTask(info: TaskInfo): ExtensionTask {
  const exit = info.exit
  const status = exit === undefined ? 'working' : exit.reason === 'cancelled' ? 'cancelled' : 'completed'
  return {
    taskId: info.id,
    status,
    statusMessage: exit === undefined ? info.lifecycle.status : describeExit(exit),
    createdAt: info.startedAt.toISOString(),
    lastUpdatedAt: (info.endedAt ?? info.startedAt).toISOString(),
    ttlMs: null,
    pollIntervalMs: TASK_POLL_MS,
  }
}

/** Serves `tasks/get`, `tasks/update` and `tasks/cancel` of the extension for one session. */
export function serveTasksExtension(server: Server, options: TaskRequestsOptions): void {
  const { tasks, session } = options
  const known = (ctx: ServerContext, taskId: string): TaskInfo => {
    if (!declaresTasks(ctx)) {
      throw new MissingRequiredClientCapabilityError(
        { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
        `Missing required client capability: the ${TASKS_EXTENSION} extension`,
      )
    }
    const info = findTask(options, taskId)
    if (info === undefined) throw invalid('Failed to retrieve task: Task not found')
    return info
  }
  server.setRequestHandler('tasks/get', { params: TASK_PARAMS }, async ({ taskId }, ctx) => {
    const info = known(ctx, taskId)
    const task = extensionTask(info)
    if (task.status !== 'completed') return { ...task }
    // The client now holds the end: its completion mail is no news any more (decision 0104).
    tasks.seen(taskId, session)
    return { ...task, result: await resultOf(options, info) }
  })
  server.setRequestHandler('tasks/update', { params: TASK_PARAMS }, async ({ taskId }, ctx) => {
    known(ctx, taskId)
    // No input is ever outstanding: responses to keys never issued are ignored, as the spec asks.
    return {}
  })
  server.setRequestHandler('tasks/cancel', { params: TASK_PARAMS }, async ({ taskId }, ctx) => {
    const info = known(ctx, taskId)
    if (info.exit === undefined) await tasks.cancel(taskId, session)
    return {}
  })
}

/** An ended task's result: the answer its call handed over, else what the registry knows. */
async function resultOf(options: TaskRequestsOptions, info: TaskInfo): Promise<CallToolResult> {
  const answer = options.answers.get(options.session, info.id)
  return answer ? toCallToolResult(await answer) : fromRegistry(info, options.readBack)
}
