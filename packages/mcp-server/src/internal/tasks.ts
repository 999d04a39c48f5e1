/**
 * MCP Tasks (protocol 2025-11-25) over the task registry: an MCP task is a registry task, its id
 * the registry's id, its status derived from the registry's, its owner the connection's session
 * (decision 0070). Nothing is stored twice: the only state of its own is the answers calls handed
 * over, kept for `tasks/result`. The requests are served by `task-requests.ts`.
 */
import type { CallToolResult, Task } from '@modelcontextprotocol/server'
import type { ReadBack } from '@toolvisor/answers'
import type { TaskInfo } from '@toolvisor/tasks'
import { describeExit, succeeded, type ToolResult } from '@toolvisor/toolbox'

/** How often a client is asked to poll (`Task.pollInterval`), and how often `tasks/result` looks. */
export const TASK_POLL_MS = 500

/** Answers kept at most (the oldest go first; a task whose answer went is answered from the registry). */
const KEEP_ANSWERS = 1000

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
 * The answer of a task no call handed over (started by a call without `task`, or whose answer
 * was dropped): what the registry knows, and how to read the rest.
 */
export function fromRegistry(info: TaskInfo, readBack: ReadBack | undefined): CallToolResult {
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
