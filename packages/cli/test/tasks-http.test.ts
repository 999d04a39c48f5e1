// MCP Tasks (protocol 2025-11-25) against `toolvisor serve`, through the SDK client's task API:
// a stream call taken as a task outlives its client, is polled to its end from a new connection of
// the same session, and stays invisible to every other session (decision 0070).
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js'
import { describe, expect, it } from 'vitest'
import { tempDir } from './helpers.js'
import { connect, serve } from './serve-helpers.js'
import { first, settled, startTask } from './task-helpers.js'

describe('MCP Tasks over Streamable HTTP', () => {
  it('a stream call as a task: disconnect, reconnect with the session id, poll to completion, fetch the result; another session is refused', async () => {
    const server = await serve()
    const a = await connect(server.url, server.token)
    const listed = await a.client.listTools()
    const support = Object.fromEntries(listed.tools.map((t) => [t.name, t.execution?.taskSupport]))
    expect(support).toMatchObject({ counter: 'optional', log_watcher: 'optional', log_lines: undefined })
    expect(a.client.getServerCapabilities()?.tasks).toEqual({
      list: {},
      cancel: {},
      requests: { tools: { call: {} } },
    })

    const task = await startTask(a.client, 'counter', { to: 8, 'every-ms': 100 })
    expect(task).toMatchObject({ taskId: 't1', status: 'working', ttl: null, pollInterval: 500 })
    const id = a.transport.sessionId!
    await a.transport.close() // gone without ending its session

    const b = await connect(server.url, server.token)
    await expect(b.client.experimental.tasks.getTask('t1')).rejects.toThrow(
      'task t1 belongs to another session',
    )
    await expect(b.client.experimental.tasks.getTaskResult('t1', CallToolResultSchema)).rejects.toThrow(
      'task t1 belongs to another session',
    )
    await expect(b.client.experimental.tasks.cancelTask('t1')).rejects.toThrow(
      'task t1 belongs to another session',
    )
    expect((await b.client.experimental.tasks.listTasks()).tasks).toEqual([])
    await expect(b.client.experimental.tasks.getTask('t99')).rejects.toThrow('Task not found')

    const back = await connect(server.url, server.token, id)
    const done = await settled(back.client, 't1')
    expect(done).toMatchObject({ taskId: 't1', status: 'completed', statusMessage: 'exit code 0' })
    const result = await back.client.experimental.tasks.getTaskResult('t1', CallToolResultSchema)
    expect(result.isError).toBe(false)
    expect((result.structuredContent as { events: Array<{ n: number }> }).events.map((e) => e.n)).toEqual([
      1, 2, 3, 4, 5, 6, 7, 8,
    ])
    expect(result._meta?.['io.modelcontextprotocol/related-task']).toEqual({ taskId: 't1' })
    // The registry says the same: `processes` shows the task ended as the protocol does.
    const status = first(
      await back.client.callTool({ name: 'processes', arguments: { command: 'status', process: 't1' } }),
    )
    expect(status).toMatchObject({ process: 't1', status: 'exited (0)' })
    expect((await back.client.experimental.tasks.listTasks()).tasks.map((t) => [t.taskId, t.status])).toEqual(
      [['t1', 'completed']],
    )
  })

  it('tasks/cancel stops the process with its declared cancel; a oneshot tool is refused as a task; a call without task answers as before', async () => {
    const server = await serve()
    const { client } = await connect(server.url, server.token)
    const task = await startTask(client, 'counter', { to: 100000, 'every-ms': 50 })
    const cancelled = await client.experimental.tasks.cancelTask(task.taskId)
    expect(cancelled).toMatchObject({ taskId: task.taskId, status: 'cancelled' })
    expect(cancelled.statusMessage).toMatch(/^cancelled \(/)
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)
    expect(result.isError).toBe(true)
    await expect(client.experimental.tasks.cancelTask(task.taskId)).rejects.toThrow(
      'Cannot cancel task in terminal status: cancelled',
    )

    const file = join(tempDir('tv-tasks-'), 'log')
    writeFileSync(file, 'one\n')
    await expect(startTask(client, 'log_lines', { file })).rejects.toThrow(
      'tool "log_lines" does not run as a task (its execution.taskSupport is "forbidden"); call it without "task"',
    )
    const plain = first(await client.callTool({ name: 'counter', arguments: { to: 100000 } }))
    expect(plain).toMatchObject({ status: 'running', task: 't2' })
  })
})
