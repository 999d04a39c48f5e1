// MCP Tasks over stdio, through the SDK client's task API: `toolvisor mcp` in process, and the
// bridge to `toolvisor serve`, whose second turn of the same --session finds the task of the first
// and polls it to its end (decision 0070).
import { randomUUID } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js'
import { eventually } from '@toolvisor/process-runtime/testing'
import { afterEach, describe, expect, it } from 'vitest'
import { bin, examples, tagged, tempDir } from './helpers.js'
import { bridgeArgs, serve } from './serve-helpers.js'
import { settled, startTask } from './task-helpers.js'

const open: Array<{ client: Client; tag: string }> = []
afterEach(async () => {
  for (const { client, tag } of open.splice(0)) {
    await client.close()
    expect(await eventually(() => tagged(tag).length === 0, 3000), 'processes left running').toBe(true)
  }
})

/** An SDK client over stdio on `toolvisor ARGS...`. */
async function stdio(args: string[], tag = randomUUID()) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin, ...args],
    env: { ...(process.env as Record<string, string>), TV_TEST_TAG: tag },
    stderr: 'pipe',
  })
  const client = new Client({ name: 'tasks-stdio', version: '0' })
  await client.connect(transport)
  open.push({ client, tag })
  return client
}

describe('MCP Tasks over stdio', () => {
  it('a stream call, a service start and a background bash each run as a task of the one registry', async () => {
    const state = tempDir('tv-tasks-state-')
    const client = await stdio(['mcp', '--toolbox', examples, '--bash', '--state-dir', state])
    // A client lists the tools first (which waits for the toolboxes), and learns which run as tasks.
    expect((await client.listTools()).tools.find((t) => t.name === 'bash')?.execution).toEqual({
      taskSupport: 'optional',
    })
    // callToolStream takes the call as a task and polls it to its answer.
    const seen: string[] = []
    let answer: unknown
    for await (const message of client.experimental.tasks.callToolStream(
      { name: 'counter', arguments: { to: 3, 'every-ms': 50 } },
      CallToolResultSchema,
      { task: {} },
    )) {
      seen.push(message.type)
      if (message.type === 'result') answer = message.result
      if (message.type === 'error') throw message.error
    }
    expect(seen[0]).toBe('taskCreated')
    expect(seen.at(-1)).toBe('result')
    expect((answer as { structuredContent: { events: unknown[] } }).structuredContent.events).toHaveLength(3)

    const log = join(tempDir('tv-tasks-log-'), 'app.log')
    writeFileSync(log, '')
    const service = await startTask(client, 'log_watcher', { file: log })
    expect(service).toMatchObject({ taskId: 'p1', status: 'working' })
    expect(await client.experimental.tasks.cancelTask('p1')).toMatchObject({
      taskId: 'p1',
      status: 'cancelled',
    })
    const end = await client.experimental.tasks.getTaskResult('p1', CallToolResultSchema)
    expect(end.structuredContent).toMatchObject({ process: 'p1', tool: 'log_watcher' })

    const shell = await startTask(client, 'bash', {
      command: 'echo hi; exit 3',
      description: 'prints and fails',
    })
    expect(await settled(client, shell.taskId)).toMatchObject({
      status: 'failed',
      statusMessage: 'exit code 3',
    })
    const ran = await client.experimental.tasks.getTaskResult(shell.taskId, CallToolResultSchema)
    expect(ran).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: 'Error: hi\n[exit code: 3]' }],
    })

    const tasks = (await client.experimental.tasks.listTasks()).tasks
    expect(tasks.map((t) => [t.taskId, t.status])).toEqual([
      ['t1', 'completed'],
      ['p1', 'cancelled'],
      [shell.taskId, 'failed'],
    ])
  })

  it("hyperhive's run runs as a task: taken at once, its answer at the end the full status JSON", async () => {
    const state = tempDir('tv-tasks-hyperhive-')
    const client = await stdio(['mcp', '--bash-profile', 'hyperhive', '--allow-empty', '--state-dir', state])
    expect((await client.listTools()).tools.find((t) => t.name === 'run')?.execution).toEqual({
      taskSupport: 'optional',
    })
    // wait_seconds would make a plain call wait 10 s inline: a task answers at once instead.
    const task = await startTask(client, 'run', { cmd: 'echo out; echo err >&2; exit 4', wait_seconds: 10 })
    expect(task.taskId).toMatch(/^[0-9a-f]{8}$/)
    expect(await settled(client, task.taskId)).toMatchObject({
      status: 'failed',
      statusMessage: 'exit code 4',
    })
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)
    const report = JSON.parse((result.content as Array<{ text: string }>)[0]!.text)
    expect(report).toMatchObject({
      id: task.taskId,
      status: 'done',
      exit_code: 4,
      stdout_tail: 'out\n',
      stderr_tail: 'err\n',
    })
    expect(result.structuredContent).toEqual(report)
  })

  it('every completion surface tells one end, and the model gets it once whichever way it looks (decision 0104)', async () => {
    const client = await stdio(['mcp', '--bash', '--allow-empty', '--state-dir', tempDir('tv-tasks-once-')])
    const texts = async (name: string, args: Record<string, unknown>) => {
      const result = await client.callTool({ name, arguments: args })
      return (result.content as Array<{ text: string }>).map((c) => c.text).join('\n')
    }
    const ended = (id: string) =>
      eventually(() => {
        void client.experimental.tasks.getTask(id).then((t) => (states[id] = t.status))
        return ['failed', 'completed'].includes(states[id] ?? '')
      }, 10_000)
    const states: Record<string, string> = {}
    const start = async (command: string) => {
      const text = await texts('bash', { command, description: 'ends', run_in_background: true })
      return text.replace('started background task ', '')
    }
    // Every surface says the same end: exit code 3.
    const a = await start('exit 3')
    expect(await ended(a)).toBe(true)
    expect(await client.experimental.tasks.getTask(a)).toMatchObject({
      status: 'failed',
      statusMessage: 'exit code 3',
    })
    const status = JSON.parse(await texts('processes', { command: 'status', process: a }))
    expect(status).toMatchObject({ process: a, status: 'exited (3)' })
    expect(await texts('bash_output', { task_id: a })).toBe(
      '(no new output)\n[status: completed, exit code: 3]',
    )
    // Seen through MCP Tasks (tasks/get above): no notice of it in any later result.
    expect(await texts('bash', { command: 'true', description: 'next' })).toBe('(no output)')
    // Seen by nobody: the notice comes once, in the next result, saying the same end.
    const b = await start('exit 3')
    const next = await texts('bash', { command: 'sleep 0.5', description: 'let it end' })
    const after = next.includes('[mail ')
      ? next
      : await texts('bash', { command: 'true', description: 'again' })
    expect(after).toContain(
      `completion: "background bash task ${b} finished [status: completed, exit code: 3]. Read its output with bash_output."`,
    )
    expect(await texts('bash', { command: 'true', description: 'and again' })).toBe('(no output)')
  })

  it('through the bridge: a task of one turn is polled to its end and fetched by the next turn of the same --session, never by another', async () => {
    const server = await serve()
    const address = new URL(server.url).host
    const turn = (session: string) => stdio(bridgeArgs(address, server.state, session))
    const one = await turn('agent-1')
    const task = await startTask(one, 'counter', { to: 5, 'every-ms': 100 })
    await one.close()
    const other = await turn('agent-2')
    await expect(other.experimental.tasks.getTask(task.taskId)).rejects.toThrow(
      `task ${task.taskId} belongs to another session`,
    )
    const two = await turn('agent-1')
    expect(await settled(two, task.taskId)).toMatchObject({ status: 'completed' })
    const result = await two.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)
    expect((result.structuredContent as { events: unknown[] }).events).toHaveLength(5)
  })
})
