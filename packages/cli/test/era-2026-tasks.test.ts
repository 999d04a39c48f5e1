// The Tasks extension of MCP 2026-07-28 (io.modelcontextprotocol/tasks, SEP-2663) against
// `toolvisor serve`, on the wire as its specification writes it (decision 0109, point 5): a request
// that declares the extension gets a task handle for a stream call, `tasks/get` polls it to
// `completed` with the final CallToolResult inlined, `tasks/cancel` stops one, and a request without
// the extension gets a complete result and is refused the task methods (-32021). A task is seen by
// its own session only.
import { describe, expect, it } from 'vitest'
import { serve } from './serve-helpers.js'

const TASKS = 'io.modelcontextprotocol/tasks'

type Answer = {
  status: number
  result?: Record<string, unknown>
  error?: { code: number; message: string; data?: unknown }
}

/** One 2026-07-28 JSON-RPC request to the serve at `url`, as `session`, declaring the extension or not. */
async function rpc(
  server: { url: string; token: string },
  session: string,
  method: string,
  params: Record<string, unknown>,
  extension = true,
): Promise<Answer> {
  const response = await fetch(server.url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${server.token}`,
      'x-toolvisor-session': session,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      ...(typeof params.name === 'string' ? { 'mcp-name': params.name } : {}),
      ...(typeof params.taskId === 'string' ? { 'mcp-name': params.taskId } : {}),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'tasks-wire', version: '0' },
          'io.modelcontextprotocol/clientCapabilities': extension ? { extensions: { [TASKS]: {} } } : {},
        },
      },
    }),
  })
  const text = await response.text()
  // An answer that streamed (SSE) carries its message in the last data line.
  const json = text.startsWith('{')
    ? text
    : (
        text
          .split('\n')
          .filter((l) => l.startsWith('data: '))
          .at(-1) ?? ''
      ).slice(6)
  return { status: response.status, ...(JSON.parse(json) as Omit<Answer, 'status'>) }
}

/** Polls `tasks/get` until the task is no longer working. */
async function settle(server: { url: string; token: string }, session: string, taskId: string) {
  for (let i = 0; i < 100; i++) {
    const got = await rpc(server, session, 'tasks/get', { taskId })
    if (got.result?.status !== 'working') return got
    await new Promise((resolve) => setTimeout(resolve, Number(got.result?.pollIntervalMs) / 5))
  }
  throw new Error(`task ${taskId} still working after 100 polls`)
}

describe('the Tasks extension of 2026-07-28 against toolvisor serve', () => {
  it('takes a stream call as a task when the request declares it, polls it to its result, and keeps it to its session', async () => {
    const server = await serve()
    const discover = await rpc(server, 'alpha', 'server/discover', {})
    expect(discover.result?.capabilities).toMatchObject({ extensions: { [TASKS]: {} } })
    expect(discover.result?.capabilities).not.toHaveProperty('tasks')

    const created = await rpc(server, 'alpha', 'tools/call', {
      name: 'counter',
      arguments: { to: 3, 'every-ms': 50 },
    })
    expect(created.result).toMatchObject({
      resultType: 'task',
      taskId: 't1',
      status: 'working',
      ttlMs: null,
      pollIntervalMs: 500,
    })
    expect(Date.parse(String(created.result?.createdAt))).not.toBeNaN()

    // Another session: refused in the registry's words; an unknown task: not found.
    const stolen = await rpc(server, 'beta', 'tasks/get', { taskId: 't1' })
    expect(stolen.error).toMatchObject({
      code: -32602,
      message: expect.stringContaining('task t1 belongs to another session'),
    })
    expect((await rpc(server, 'beta', 'tasks/cancel', { taskId: 't1' })).error?.code).toBe(-32602)
    expect((await rpc(server, 'alpha', 'tasks/get', { taskId: 't99' })).error).toMatchObject({
      code: -32602,
      message: 'Failed to retrieve task: Task not found',
    })
    // Without the extension: refused, naming what to declare.
    const undeclared = await rpc(server, 'alpha', 'tasks/get', { taskId: 't1' }, false)
    expect(undeclared.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { extensions: { [TASKS]: {} } } },
    })

    const done = await settle(server, 'alpha', 't1')
    expect(done.result).toMatchObject({
      resultType: 'complete',
      taskId: 't1',
      status: 'completed',
      statusMessage: 'exit code 0',
    })
    const result = done.result?.result as {
      isError: boolean
      structuredContent: { events: Array<{ n: number }> }
    }
    expect(result.isError).toBe(false)
    expect(result.structuredContent.events.map((e) => e.n)).toEqual([1, 2, 3])
    // Acknowledged, with nothing outstanding to answer.
    expect(
      (await rpc(server, 'alpha', 'tasks/update', { taskId: 't1', inputResponses: {} })).result,
    ).toMatchObject({
      resultType: 'complete',
    })

    // The same call without the extension: a complete result, as a 2025 call without `task`.
    const plain = await rpc(
      server,
      'alpha',
      'tools/call',
      { name: 'counter', arguments: { to: 1, 'every-ms': 10 } },
      false,
    )
    expect(plain.result).toMatchObject({ resultType: 'complete' })
    expect(plain.result).not.toHaveProperty('taskId')
    server.child.kill('SIGTERM')
    expect(await server.exited).toBe(0)
  })

  it('cancels a task with tasks/cancel: the process gets its declared cancel and the task says cancelled', async () => {
    const server = await serve()
    const created = await rpc(server, 'alpha', 'tools/call', {
      name: 'counter',
      arguments: { to: 1000, 'every-ms': 100 },
    })
    const taskId = String(created.result?.taskId)
    expect((await rpc(server, 'alpha', 'tasks/cancel', { taskId })).result).toMatchObject({
      resultType: 'complete',
    })
    const done = await settle(server, 'alpha', taskId)
    expect(done.result).toMatchObject({ taskId, status: 'cancelled' })
    expect(done.result).not.toHaveProperty('result')
    server.child.kill('SIGTERM')
    expect(await server.exited).toBe(0)
  })
})
