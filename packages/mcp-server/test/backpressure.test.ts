import { describe, expect, it } from 'vitest'
import { groupAlive, groups, waitFor } from './helpers.js'
import { initializeRequest, runFixture } from './stdio-helpers.js'

const tool = (id: number, name: string, args: object = {}, meta?: object) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args, ...(meta ? { _meta: meta } : {}) },
})

describe('a client that does not read stdout', () => {
  it('gets no more progress notifications once answers wait for it, the result counts them, and the session goes on', async () => {
    const server = runFixture({ progressPerSecond: 1_000_000, progressBurst: 1_000_000 }, { read: false })
    server.send(initializeRequest)
    server.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
    server.send(tool(1, 'flood', { count: 5000, size: 1000 }, { progressToken: 'f' }))
    await server.stderr.waitFor(/fixture: flooded 5000\n/)
    await server.stderr.waitFor(
      /fixture: the client is not reading stdout: \d+ bytes wait for it; progress notifications are dropped until it reads\n/,
    )
    server.read()
    const answer = await server.waitForMessage((m) => m.id === 1, 'the flood answer')
    const sent = server.messages().filter((m) => m.method === 'notifications/progress').length
    expect(sent).toBeGreaterThan(0)
    expect(sent).toBeLessThan(1000)
    expect(answer.result).toEqual({
      content: [{ type: 'text', text: 'flooded 5000' }],
      isError: false,
      _meta: { 'toolvisor/progress': { events: 5000, sent, dropped: 5000 - sent } },
    })
    server.send({ jsonrpc: '2.0', id: 2, method: 'ping' })
    await server.waitForMessage((m) => m.id === 2, 'the ping answer')
  })

  it('ends the session once more than maxQueuedBytes wait for it: the calls in flight are cancelled, and what waits goes out when it reads', async () => {
    // Calls are not capped here: this is about bytes.
    const server = runFixture(
      { maxQueuedBytes: 256 * 1024, maxConcurrentCalls: 1000, maxQueuedCalls: 0 },
      { read: false },
    )
    server.send(initializeRequest)
    server.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
    server.send(tool(1, 'sleeper'))
    const pgid = Number((await server.stderr.waitFor(/sleep-pgid (\d+)/))[1])
    groups.add(pgid)
    for (let id = 2; id < 300; id++) server.send(tool(id, 'big', { bytes: 4096 }))
    const [, waiting] = await server.stderr.waitFor(
      /fixture: the client is not reading stdout: (\d+) bytes wait for it, over maxQueuedBytes 262144; closing the session\n/,
    )
    expect(Number(waiting)).toBeGreaterThan(256 * 1024)
    await server.stderr.waitFor(/fixture: served, stopped by the client\n/)
    expect(server.stderr.text()).toContain('fixture: sleeper aborted\n')
    await waitFor(() => !groupAlive(pgid), 5000, `process group ${pgid} to exit`)
    server.read()
    expect(await server.exited).toBe(0)
    const answered = server.messages().map((m) => m.id)
    expect(answered.slice(0, 2)).toEqual([0, 2])
    expect(answered.length).toBeLessThan(299)
    expect(answered).not.toContain(1)
  })
})
