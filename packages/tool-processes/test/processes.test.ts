import { describe, expect, it } from 'vitest'
import { compose } from './helpers.js'

describe('the processes tool', () => {
  it("lists, tails, shows and stops the session's tasks, in JSON", async () => {
    const { call } = await compose()
    const started = await call('ticker', { count: 1000 })
    expect(started.body).toMatchObject({ status: 'running', task: 't1', tool: 'ticker' })
    const list = await call('processes', { command: 'list' })
    expect(list).toEqual({
      isError: false,
      body: {
        processes: [
          {
            process: 't1',
            tool: 'ticker',
            kind: 'stream',
            status: 'running',
            since: expect.any(String),
            age: expect.stringMatching(/^\d+s$/),
          },
        ],
      },
    })
    await new Promise((r) => setTimeout(r, 300))
    const tail = await call('processes', { command: 'tail', process: 't1', n: 3 })
    expect(tail.body.events).toHaveLength(3)
    const [a, b, c] = tail.body.events.map((e: string) => Number(e.replace('tick ', '')))
    expect([b - a, c - b]).toEqual([1, 1])
    expect(tail.body.total).toBeGreaterThanOrEqual(c + 1)
    const status = await call('processes', { command: 'status', process: 't1' })
    expect(status.body).toMatchObject({
      process: 't1',
      status: 'running',
      counters: { events: expect.any(Number), invalidEvents: 0 },
    })
    expect(status.body.events.length).toBeGreaterThan(0)
    const stop = await call('processes', { command: 'stop', process: 't1' })
    expect(stop.body).toEqual({
      process: 't1',
      status: 'exited',
      exitCode: null,
      signal: 'SIGTERM',
      reason: 'cancelled',
    })
    const after = await call('processes', { command: 'list' })
    expect(after.body.processes[0].status).toBe('exited (SIGTERM)')
  })

  it('escalates to SIGKILL after the stop timeout, and force kills at once', async () => {
    const { call } = await compose()
    await call('stubborn', {})
    await call('stubborn', {})
    const status = await call('processes', { command: 'status', process: 't1' })
    expect(status.body.stderr).toEqual(['warming up'])
    const began = Date.now()
    const stop = await call('processes', { command: 'stop', process: 't1' })
    expect(Date.now() - began).toBeGreaterThanOrEqual(290)
    expect(stop.body).toMatchObject({ signal: 'SIGKILL', reason: 'cancelled' })
    const forced = Date.now()
    const force = await call('processes', { command: 'stop', process: 't2', force: true })
    expect(Date.now() - forced).toBeLessThan(250)
    expect(force.body).toMatchObject({ signal: 'SIGKILL' })
  })

  it("never shows, reads or stops another session's task", async () => {
    const { call } = await compose()
    await call('ticker', { count: 1000 }, 'alice')
    expect((await call('processes', { command: 'list' }, 'bob')).body).toEqual({ processes: [] })
    for (const command of ['status', 'tail', 'stop']) {
      expect(await call('processes', { command, process: 't1' }, 'bob')).toEqual({
        isError: true,
        body: { error: 'task t1 belongs to another session' },
      })
    }
    expect((await call('processes', { command: 'status', process: 't1' }, 'alice')).body.status).toBe(
      'running',
    )
    await call('processes', { command: 'stop', process: 't1', force: true }, 'alice')
  })

  it('answers bad arguments with a clear error', async () => {
    const { call } = await compose()
    expect(await call('processes', { command: 'kill' })).toEqual({
      isError: true,
      body: {
        error:
          'command must be one of list, status, tail, read, page, output, stop, wait, screen, keys; got "kill"',
      },
    })
    expect((await call('processes', { command: 'tail' })).body.error).toBe(
      'tail needs "process": the id of one of this session\'s processes (see command "list")',
    )
    expect((await call('processes', { command: 'tail', process: 't1', n: 0 })).body.error).toBe(
      'n must be an integer from 1 to 1000; got 0',
    )
    expect((await call('processes', { command: 'status', process: 't9' })).body.error).toBe('no task t9')
  })
})
