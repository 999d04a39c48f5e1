import { appendFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { markedProcesses } from '@toolvisor/process-runtime'
import { eventually } from '@toolvisor/process-runtime/testing'
import { describe, expect, it } from 'vitest'
import { compose, type MailJson, mailUntil, tempDir } from './helpers.js'

describe('bad output and faults', () => {
  it('takes a 10 MB line and binary garbage as invalid events; the service and others run on', async () => {
    const { call, tasks, mail } = await compose({ replyMs: 200 })
    await call('echoer', {}, 'bob')
    expect((await call('garbage', {}, 'alice')).body).toMatchObject({ process: 'p2', status: 'running' })
    const valid = (value: unknown) => (value as { ok?: boolean }).ok === true
    expect(
      await eventually(
        () =>
          tasks
            .process('p2', 'alice')
            .output.tail(1)
            .some((e) => valid(e.value)),
        15_000,
      ),
    ).toBe(true)
    const garbage = tasks.process('p2', 'alice')
    const events = garbage.output
      .read(0, 1000)
      .events.map((e) => e.value as { invalid?: boolean; raw?: string })
    expect(events[0]).toMatchObject({ invalid: true })
    expect(events[0]!.raw!.length).toBeLessThan(64 * 1024)
    expect(events.slice(0, -1).every((e) => e.invalid === true)).toBe(true)
    expect(garbage.output.counters().invalidEvents).toBe(events.length - 1)
    expect(garbage.lifecycle.status).toBe('running')
    // The mail stands for every event, each envelope within its bound.
    const got = await mailUntil(call, 'alice', (m) => total(m, 'process:p2') === events.length)
    expect(total(got, 'process:p2')).toBe(events.length)
    for (const envelope of got) expect(JSON.stringify(envelope.body).length).toBeLessThanOrEqual(64 * 1024)
    // bob's process answers as before.
    const sent = await call('echoer.send', { process: 'p1', event: { say: 'still here' } }, 'bob')
    expect(sent.body).toEqual({ accepted: true, events: [{ got: { say: 'still here' } }] })
    expect(mail.unread('bob')).toBe(0)
  })

  it('answers a send whose session closes mid-window with what came, and stops only that session', async () => {
    const { call, tasks, sessions, tools } = await compose({ replyMs: 20_000 })
    await call('echoer', {}, 'alice')
    await call('echoer', {}, 'bob')
    const ctx = { sessionId: 'alice', signal: new AbortController().signal }
    const sending = tools.call('echoer.send', { process: 'p1', event: { say: 'bye' } }, ctx)
    expect(await eventually(() => tasks.process('p1', 'alice').output.counters().events === 1)).toBe(true)
    const began = Date.now()
    await sessions.close('alice')
    const answer = JSON.parse((await sending).content[0]!.text)
    expect(Date.now() - began).toBeLessThan(10_000)
    expect(answer).toEqual({ accepted: true, events: [{ got: { say: 'bye' } }], status: 'exited (SIGTERM)' })
    expect(tasks.get('p2', 'bob').lifecycle.status).toBe('running')
    expect((await call('echoer.send', { process: 'p1', event: { say: 'x' } }, 'alice')).body.error).toBe(
      'echoer.send: p1 is exited (SIGTERM): nothing was written (start echoer again for a new process)',
    )
  })

  it('keeps 20,000 events a second for 10 s under per round bounded, every event accounted for', async () => {
    const { call, tasks, mail, runId } = await compose()
    const rssBefore = process.memoryUsage().rss
    expect((await call('firehose', { rate: 20_000, seconds: 10 }, 's1')).body).toMatchObject({
      process: 'p1',
    })
    const service = tasks.process('p1', 's1')
    const expected = 20_000 * 10 + 1
    const got: MailJson[] = []
    let deliveries = 0
    let maxUnread = 0
    let maxHeld = 0
    let mark = 0
    const deadline = Date.now() + 60_000
    while (total(got, 'process:p1') < expected && Date.now() < deadline) {
      // A model's turn reads its mail about once a second of this output (20,000 events), never
      // more: between two turns, the round digest holds what came, within its bound.
      await eventually(() => {
        maxHeld = Math.max(maxHeld, service.output.heldBytes())
        return service.output.counters().events >= Math.min(expected, mark + 20_000)
      }, 30_000)
      mark = service.output.counters().events
      const answer = await call('processes', { command: 'wait', timeout_seconds: 5 }, 's1')
      deliveries += 1
      got.push(...answer.body.mail)
      maxUnread = Math.max(maxUnread, mail.unread('s1'))
    }
    expect(service.output.counters().events).toBe(expected)
    expect(total(got, 'process:p1')).toBe(expected)
    const kept = got.reduce((sum, m) => sum + (m.kind === 'digest' ? (m.body as unknown[]).length : 1), 0)
    const omitted = got.reduce((sum, m) => sum + m.omitted, 0)
    expect(kept + omitted).toBe(expected)
    // One envelope per delivery point at most, each within the envelope bound.
    expect(got.length).toBeLessThanOrEqual(deliveries)
    expect(deliveries).toBeLessThanOrEqual(15)
    for (const envelope of got) {
      if (envelope.kind === 'digest') expect((envelope.body as unknown[]).length).toBeLessThanOrEqual(1000)
      expect(JSON.stringify(envelope.body).length).toBeLessThanOrEqual(64 * 1024)
    }
    expect(maxUnread).toBeLessThanOrEqual(256)
    expect(maxHeld).toBeLessThanOrEqual(16 * 1024 * 1024)
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(256 * 1024 * 1024)
    await call('processes', { command: 'stop', process: 'p1' }, 's1')
    expect(markedProcesses(runId)).toEqual([])
  }, 90_000)
})

describe('processes wait', () => {
  it('returns a task completion, says when the bound passed, and waits on one process', async () => {
    const { call, ended, tasks } = await compose({ replyMs: 100 })
    await call('ticker', { count: 3 }, 's1')
    await ended('t1', 's1')
    const done = await call('processes', { command: 'wait', timeout_seconds: 5 }, 's1')
    expect(done.body.mail).toEqual([
      expect.objectContaining({
        id: 'done-t1',
        from: 'task:t1',
        kind: 'completion',
        body: expect.objectContaining({ task: 't1', tool: 'ticker', kind: 'stream', status: 'exited (0)' }),
      }),
    ])
    expect((await call('processes', { command: 'wait', timeout_seconds: 1 }, 's1')).body).toEqual({
      mail: [],
      timeout: 'no new mail within 1 s',
    })
    expect((await call('processes', { command: 'wait', process: 't1' }, 's1')).body).toEqual({
      mail: [],
      process: 't1',
      status: 'exited (0)',
      note: 't1 has ended; its mail was delivered already',
    })
    // A send's reply is not mail (decision 0020): the mail waited for is output nobody asked for.
    const feed = join(tempDir(), 'feed')
    writeFileSync(feed, '')
    await call('feeder', { feed }, 's1')
    const waiting = call('processes', { command: 'wait', process: 'p1', timeout_seconds: 20 }, 's1')
    await call('echoer', { greeting: 'not for the wait' }, 's1')
    expect(await eventually(() => tasks.process('p2', 's1').output.counters().events === 1)).toBe(true)
    appendFileSync(feed, 'for\nthe\nwait\n')
    const woke = (await waiting).body.mail as MailJson[]
    expect(eventsOf(woke, 'process:p1')).toEqual([{ line: 'for' }, { line: 'the' }, { line: 'wait' }])
    expect((await call('processes', { command: 'wait', timeout_seconds: 301 }, 's1')).body.error).toBe(
      'timeout_seconds must be an integer from 0 to 300; got 301',
    )
  })
})

function total(mail: readonly MailJson[], from: string): number {
  return mail.filter((m) => m.from === from).reduce((sum, m) => sum + m.events, 0)
}

function eventsOf(mail: readonly MailJson[], from: string): unknown[] {
  return mail
    .filter((m) => m.from === from)
    .flatMap((m) => (m.kind === 'digest' ? (m.body as unknown[]) : [m.body]))
}
