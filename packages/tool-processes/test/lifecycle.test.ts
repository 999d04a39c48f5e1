import { markedProcesses } from '@toolvisor/process-runtime'
import { eventually } from '@toolvisor/process-runtime/testing'
import { describe, expect, it } from 'vitest'
import { cancelled, compose, type MailJson, mailUntil } from './helpers.js'

describe('a service start', () => {
  it('that never reaches ready within timeout.start fails with the output tails and leaves nothing running', async () => {
    const { raw, call, runId } = await compose()
    const result = await raw('late', {}, 's1')
    expect(result.isError).toBe(true)
    expect(result.content[0]!.text).toBe(
      'late: p1 did not start: late did not become ready within 1 s\n' +
        '--- stdout (last bytes) ---\nloading\n\n--- stderr (last bytes) ---\nstill loading\n',
    )
    expect(markedProcesses(runId)).toEqual([])
    expect((await call('processes', { command: 'list' }, 's1')).body.processes[0]).toMatchObject({
      process: 'p1',
      status: 'failed: did not become ready within 1 s',
    })
  })

  it('that exits before ready fails with its exit and tails', async () => {
    const { raw, runId } = await compose()
    const result = await raw('dies', {}, 's1')
    expect(result.content[0]!.text).toBe(
      'dies: p1 did not start: dies exited (code 3) before it was ready\n' +
        '--- stdout (last bytes) ---\nreading config\n\n--- stderr (last bytes) ---\nmissing config file\n',
    )
    expect(markedProcesses(runId)).toEqual([])
  })

  it('cancelled by its caller before ready is stopped', async () => {
    const { tools, runId } = await compose()
    const controller = new AbortController()
    const started = tools.call('late', {}, { sessionId: 's1', signal: controller.signal })
    controller.abort()
    expect((await started).content[0]!.text).toBe('late: cancelled before p1 was ready; it was stopped')
    expect(markedProcesses(runId)).toEqual([])
  })
})

describe('on_exit and timeout.idle', () => {
  it('restarts a crash-looping service with backoff, then fails it; every restart is an event and mail', async () => {
    const { call, ended, tasks } = await compose({ restart: { baseMs: 50 } })
    expect((await call('crasher', {}, 's1')).body).toMatchObject({ process: 'p1', status: 'running' })
    expect(await eventually(() => tasks.get('p1', 's1').lifecycle.status === 'restarting')).toBe(true)
    const info = await ended('p1', 's1')
    expect(info.lifecycle).toEqual({
      status: 'failed',
      why: 'exited (code 1) after 5 restarts in a row (on_exit restart gives up after 5)',
    })
    // The mail first: a status that shows the end would withdraw the completion (decision 0104).
    const mail = await mailUntil(call, 's1', (m) => m.some((e) => e.kind === 'completion'))
    const status = await call('processes', { command: 'status', process: 'p1' }, 's1')
    const restarts = status.body.restarts as Array<{
      restart: number
      at: string
      in_seconds: number
      after: string
    }>
    expect(restarts.map((r) => [r.restart, r.in_seconds, r.after])).toEqual([
      [1, 0.05, 'exited (code 1)'],
      [2, 0.1, 'exited (code 1)'],
      [3, 0.2, 'exited (code 1)'],
      [4, 0.4, 'exited (code 1)'],
      [5, 0.8, 'exited (code 1)'],
    ])
    // Each run started only after its delay: the gaps between restarts grow with the backoff.
    for (let i = 1; i < restarts.length; i++) {
      const gap = Date.parse(restarts[i]!.at) - Date.parse(restarts[i - 1]!.at)
      expect(gap).toBeGreaterThanOrEqual(restarts[i - 1]!.in_seconds * 1000)
    }
    // Six runs, one event each, read as one sequence.
    const tail = await call('processes', { command: 'tail', process: 'p1', n: 10 }, 's1')
    expect(tail.body).toMatchObject({ events: Array(6).fill('starting'), from: 0, next: 6, total: 6 })
    expect(status.body.stderr).toEqual(Array(6).fill('boom: no disk'))
    const controls = mail.filter((m) => m.kind === 'control')
    expect(controls.map((m) => [m.id, (m.body as { status: string }).status])).toEqual([
      ['restart-p1-1', 'restarting (1)'],
      ['restart-p1-2', 'restarting (2)'],
      ['restart-p1-3', 'restarting (3)'],
      ['restart-p1-4', 'restarting (4)'],
      ['restart-p1-5', 'restarting (5)'],
    ])
    expect(controls[0]!.body).toMatchObject({ of: 5, after: 'exited (code 1)', stderr: ['boom: no disk'] })
    expect(mail.at(-1)).toMatchObject({
      kind: 'completion',
      body: {
        status: 'failed: exited (code 1) after 5 restarts in a row (on_exit restart gives up after 5)',
        restarts: 5,
      },
    })
    const events = mail.filter((m) => m.kind === 'event' || m.kind === 'digest')
    expect(events.reduce((sum: number, m: MailJson) => sum + m.events, 0)).toBe(6)
  })

  it('stops a service between two runs without starting another', async () => {
    const { call, tasks } = await compose({ restart: { baseMs: 60_000 } })
    await call('crasher', {}, 's1')
    expect(await eventually(() => tasks.get('p1', 's1').lifecycle.status === 'restarting', 10_000)).toBe(true)
    const stop = await call('processes', { command: 'stop', process: 'p1' }, 's1')
    expect(stop.body).toEqual(cancelled('p1', 1))
    expect(tasks.get('p1', 's1').lifecycle).toEqual({ status: 'exited', code: 1, signal: null })
  })

  it('stops a service idle for timeout.idle, and reports it; an event sent restarts the bound', async () => {
    const { call, tasks } = await compose({ replyMs: 300 })
    await call('idler', {}, 's1')
    const sentAt = Date.now()
    const sent = await call('idler.send', { process: 'p1', event: 'hello' }, 's1')
    expect(sent.body).toEqual({ accepted: true, events: ['heard hello'] })
    const mail = await mailUntil(call, 's1', (m) => m.some((e) => e.kind === 'completion'))
    // The bound ran from the last event in or out (the reply), not from the start.
    expect(tasks.get('p1', 's1').exit!.at.getTime() - sentAt).toBeGreaterThanOrEqual(1000)
    expect(mail.at(-1)).toMatchObject({
      id: 'exit-p1',
      kind: 'completion',
      body: {
        process: 'p1',
        reason: 'idle',
        note: 'stopped after 1 s without an event in or out (timeout.idle)',
      },
    })
    expect(tasks.get('p1', 's1').exit?.reason).toBe('idle')
  })

  it('stops every service when the runtime shuts down, a restart pending or not', async () => {
    const { call, kernel, tasks, runId } = await compose({ restart: { baseMs: 60_000 } })
    await call('echoer', {}, 'alice')
    await call('crasher', {}, 'bob')
    expect(await eventually(() => tasks.get('p2', 'bob').lifecycle.status === 'restarting', 10_000)).toBe(
      true,
    )
    await kernel.dispose()
    expect(markedProcesses(runId)).toEqual([])
    expect(tasks.get('p1', 'alice').exit?.reason).toBe('runtime-disposed')
  })
})
