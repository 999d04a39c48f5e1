// MCP Tasks as the tests drive them through the SDK client: a call taken as a task, and the poll
// of `tasks/get` until the task ended (at the interval the server asks for).
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { CreateTaskResultSchema } from '@modelcontextprotocol/sdk/experimental/tasks/types.js'

/** Starts `name` as a task with the raw request (the SDK's `callToolStream` would poll it itself). */
export async function startTask(client: Client, name: string, args: Record<string, unknown>) {
  const created = await client.request(
    { method: 'tools/call', params: { name, arguments: args, task: { ttl: 60_000 } } },
    CreateTaskResultSchema,
  )
  return created.task
}

/** Polls `tasks/get` until the task is terminal; returns its last state. */
export async function settled(client: Client, taskId: string, ms = 20_000) {
  const deadline = Date.now() + ms
  for (;;) {
    const task = await client.experimental.tasks.getTask(taskId)
    if (['completed', 'failed', 'cancelled'].includes(task.status)) return task
    if (Date.now() > deadline) throw new Error(`task ${taskId} still ${task.status} after ${ms} ms`)
    await new Promise((resolve) => setTimeout(resolve, task.pollInterval ?? 200))
  }
}

/** The tool's own answer: the first text block, as JSON (mail may follow it). */
export const first = (result: unknown) =>
  JSON.parse((result as { content: Array<{ text: string }> }).content[0]!.text)
