/**
 * MCP Tasks (protocol 2025-11-25) over the task registry: an MCP task is a registry task, its id
 * the registry's id, its status derived from the registry's, its owner the connection's session
 * (decision 0070). Nothing is stored twice: the only state of its own is the answers calls handed
 * over, kept for `tasks/result`.
 */
import type { TaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js'
import {
  type CallToolResult,
  ErrorCode,
  McpError,
  type Result,
  type Task,
} from '@modelcontextprotocol/sdk/types.js'
import type { ReadBack } from '@toolvisor/answers'
import { type TaskInfo, type TaskRegistry, TasksError, TasksErrorCodes } from '@toolvisor/tasks'
import { describeExit, succeeded, type ToolResult } from '@toolvisor/toolbox'
import { toCallToolResult } from './result.js'

/** How often a client is asked to poll (`Task.pollInterval`), and how often `tasks/result` looks. */
export const TASK_POLL_MS = 500

/** Answers kept at most (the oldest go first; a task whose answer went is answered from the registry). */
const KEEP_ANSWERS = 1000

/** A tasks page (`tasks/list`) holds this many. */
const PAGE = 100

/**
 * The answers of calls handed over as tasks, by owner and task id: one table for every connection
 * of a server, so a client that reconnects fetches the answer of a task it started before.
 */
export class TaskAnswers {
  readonly #answers = new Map<string, Promise<ToolResult>>()

  keep(session: string, task: string, answer: Promise<ToolResult>): void {
    const key = `${session}\u0000${task}`
    // An id taken over by a newer task of the same owner answers for the newer one.
    this.#answers.delete(key)
    this.#answers.set(key, answer)
    // Kept settled or not: a failure to build the answer shows in `tasks/result`, never unhandled.
    answer.catch(() => {})
    for (const old of this.#answers.keys()) {
      if (this.#answers.size <= KEEP_ANSWERS) break
      this.#answers.delete(old)
    }
  }

  get(session: string, task: string): Promise<ToolResult> | undefined {
    return this.#answers.get(`${session}\u0000${task}`)
  }
}

/** The protocol's view of a registry task. */
export function mcpTask(info: TaskInfo): Task {
  return {
    taskId: info.id,
    ...statusOf(info),
    createdAt: info.startedAt.toISOString(),
    lastUpdatedAt: (info.endedAt ?? info.startedAt).toISOString(),
    // Kept as long as the registry keeps ended tasks (its newest 1000), never on a clock.
    ttl: null,
    pollInterval: TASK_POLL_MS,
  }
}

/** `completed` only for a clean exit, as a tool result without `isError`; the registry's words as the message. */
function statusOf(info: TaskInfo): Pick<Task, 'status' | 'statusMessage'> {
  const exit = info.exit
  if (exit === undefined) {
    const lifecycle = info.lifecycle
    if (lifecycle.status === 'failed') return { status: 'failed', statusMessage: lifecycle.why }
    const message = lifecycle.status === 'restarting' ? `restarting (${lifecycle.n})` : lifecycle.status
    return { status: 'working', statusMessage: message }
  }
  if (exit.reason === 'cancelled') return { status: 'cancelled', statusMessage: describeExit(exit) }
  if (succeeded(exit)) return { status: 'completed', statusMessage: describeExit(exit) }
  return { status: 'failed', statusMessage: describeExit(exit) }
}

/**
 * The SDK's task store, as the registry seen by one session: whatever session id the SDK passes
 * (the MCP session's, which changes on reconnect), the owner is the toolvisor session. A task of
 * another session is refused with the registry's own words; an unknown one is not found.
 */
export function sessionTaskStore(options: {
  readonly tasks: TaskRegistry
  readonly answers: TaskAnswers
  readonly session: string
  readonly readBack?: ReadBack | undefined
}): TaskStore {
  const { tasks, answers, session, readBack } = options
  const find = (id: string): TaskInfo | undefined => {
    try {
      return tasks.get(id, session)
    } catch (error) {
      if (TasksError.is(error) && error.code === TasksErrorCodes.UNKNOWN_TASK) return undefined
      if (TasksError.is(error)) throw new McpError(ErrorCode.InvalidParams, error.message)
      throw error
    }
  }
  /** A task whose end a listing or a status shows: seen by the session (`tasks.seen`). */
  const shown = (task: Task): Task => {
    if (['completed', 'failed', 'cancelled'].includes(task.status)) tasks.seen(task.taskId, session)
    return task
  }
  return {
    createTask: () => Promise.reject(notHere('a task is created by a tools/call with "task"')),
    storeTaskResult: () => Promise.reject(notHere('a task ends with its process')),
    getTask: async (id) => {
      const info = find(id)
      return info === undefined ? null : shown(mcpTask(info))
    },
    async getTaskResult(id) {
      const info = find(id)
      if (info === undefined) throw new McpError(ErrorCode.InvalidParams, `Task not found: ${id}`)
      const answer = answers.get(session, id)
      const result = answer ? toCallToolResult(await answer) : fromRegistry(info, readBack)
      // The client now holds the end: its completion mail is no news any more (decision 0104).
      tasks.seen(id, session)
      return result as Result
    },
    async updateTaskStatus(id, status) {
      if (status !== 'cancelled') throw notHere(`a task's status is its process's (asked: ${status})`)
      await tasks.cancel(id, session)
    },
    async listTasks(cursor) {
      const from = cursor === undefined ? 0 : Number(cursor)
      if (!Number.isSafeInteger(from) || from < 0)
        throw new Error(`cursor ${JSON.stringify(cursor)} is not one this server gave`)
      const mine = tasks.list(session)
      const page = mine.slice(from, from + PAGE).map((info) => shown(mcpTask(info)))
      return from + PAGE < mine.length ? { tasks: page, nextCursor: String(from + PAGE) } : { tasks: page }
    },
  }
}

/**
 * The answer of a task no call handed over (started by a call without `task`, or whose answer
 * was dropped): what the registry knows, and how to read the rest.
 */
function fromRegistry(info: TaskInfo, readBack: ReadBack | undefined): CallToolResult {
  const task = mcpTask(info)
  const body = { task: info.id, tool: info.tool, status: task.status, ended: task.statusMessage }
  const read = readBack?.call({ command: 'output', process: info.id })
  return {
    content: [
      {
        type: 'text',
        text: read ? `${JSON.stringify(body)}\nread its output with ${read}` : JSON.stringify(body),
      },
    ],
    isError: task.status !== 'completed',
    structuredContent: body,
  }
}

function notHere(why: string): McpError {
  return new McpError(ErrorCode.InvalidRequest, `not supported by toolvisor: ${why}`)
}
