import { describe, expect, it } from 'vitest'
import { groupAlive, groups, waitFor } from './helpers.js'
import { type RawServer, runFixture } from './stdio-helpers.js'

const sleeper = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'sleeper' } })
const cancel = (requestId: number) => ({
  jsonrpc: '2.0',
  method: 'notifications/cancelled',
  params: { requestId },
})

/** The process groups of the sleeper calls that started, in order. */
const started = (server: RawServer): number[] =>
  [...server.stderr.text().matchAll(/sleep-pgid (\d+)/g)].map((match) => {
    const pgid = Number(match[1])
    groups.add(pgid)
    return pgid
  })

describe('concurrent calls of one session', () => {
  it('run up to maxConcurrentCalls, wait up to maxQueuedCalls more, and beyond are refused with an isError result', async () => {
    const server = runFixture({ maxConcurrentCalls: 2, maxQueuedCalls: 1 })
    await server.initialize()
    for (const id of [1, 2, 3, 4]) server.send(sleeper(id))
    const refused = await server.waitForMessage((m) => m.id === 4, 'the refusal of the fourth call')
    expect(refused.result).toEqual({
      content: [
        {
          type: 'text',
          text: 'tool "sleeper" was not run: this session already has 2 calls running and 1 waiting (maxConcurrentCalls 2, maxQueuedCalls 1); retry when one of them has finished',
        },
      ],
      isError: true,
    })
    await waitFor(() => started(server).length === 2, 10_000, 'two sleepers')
    expect(started(server)).toHaveLength(2)
    // A cancelled running call frees its place for the one waiting.
    server.send(cancel(1))
    await waitFor(() => started(server).length === 3, 10_000, 'the waiting call to start')
    // A cancelled waiting call never runs and frees its place in the queue.
    server.send(sleeper(5))
    server.send(cancel(5))
    server.send(sleeper(6))
    server.send(cancel(2))
    await waitFor(() => started(server).length === 4, 10_000, 'the sixth call to start')
    server.send({ jsonrpc: '2.0', id: 7, method: 'ping' })
    await server.waitForMessage((m) => m.id === 7, 'the ping answer')
    expect(server.messages().map((m) => m.id)).toEqual([0, 4, 7])
    const pgids = started(server)
    server.child.stdin.end()
    expect(await server.exited).toBe(0)
    for (const pgid of pgids) expect(groupAlive(pgid)).toBe(false)
  })
})

describe('progress notifications of one call', () => {
  it('50,000 events: a burst, then at most progressPerSecond, the last event always sent, the rest counted in the result', async () => {
    const server = runFixture()
    await server.initialize()
    const before = Date.now()
    server.send({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'flood', arguments: { count: 50_000, size: 10 }, _meta: { progressToken: 'p' } },
    })
    const answer = await server.waitForMessage((m) => m.id === 1, 'the flood answer')
    const seconds = (Date.now() - before) / 1000
    const progress = server.messages().filter((m) => m.method === 'notifications/progress')
    const sent = progress.length
    expect(sent).toBeLessThanOrEqual(20 + Math.ceil(10 * seconds) + 1)
    expect(progress.at(-1)?.params).toEqual({
      progressToken: 'p',
      progress: 50_000,
      message: `50000 ${'p'.repeat(10)}`,
    })
    const values = progress.map((m) => m.params?.progress as number)
    expect(values).toEqual([...values].sort((a, b) => a - b))
    expect(answer.result).toEqual({
      content: [{ type: 'text', text: 'flooded 50000' }],
      isError: false,
      _meta: { 'toolvisor/progress': { events: 50_000, sent, dropped: 50_000 - sent } },
    })
  })

  it('a slow tool gets every event through, and its result has no count', async () => {
    const server = runFixture({ progressPerSecond: 100, progressBurst: 2 })
    await server.initialize()
    server.send({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'ticker', _meta: { progressToken: 't' } },
    })
    const answer = await server.waitForMessage((m) => m.id === 1, 'the ticker answer')
    expect(server.messages().filter((m) => m.method === 'notifications/progress')).toHaveLength(3)
    expect(answer.result).toEqual({ content: [{ type: 'text', text: '3 ticks' }], isError: false })
  })
})
