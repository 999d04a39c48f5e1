import { appendFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { eventually } from '@toolvisor/process-runtime/testing'
import { describe, expect, it } from 'vitest'
import { cancelled, compose, eventsFrom, type MailJson, mailUntil, tempDir } from './helpers.js'

const linesOf = (mail: readonly MailJson[], from: string) =>
  eventsFrom(mail, from).map((event) => (event as { line?: string }).line ?? event)
/** True once the mail of p1 and p2 holds `n` events together. */
const both = (n: number) => (mail: readonly MailJson[]) =>
  linesOf(mail, 'process:p1').length + linesOf(mail, 'process:p2').length >= n

describe('service tools: the story of spec §3, in process', () => {
  it('starts log_watcher twice, mails matching lines from the right handle, sends, lists, stops, closes', async () => {
    const { call, tasks, sessions } = await compose({ replyMs: 500 })
    const dir = tempDir()
    const [a, b] = [join(dir, 'a.log'), join(dir, 'b.log')]
    writeFileSync(a, 'old ERROR, before the start\n')
    writeFileSync(b, '')
    const p1 = await call('log_watcher', { file: a, pattern: 'ERROR' }, 's1')
    const p2 = await call('log_watcher', { file: b, pattern: 'ERROR' }, 's1')
    expect(p1.body).toEqual({
      process: 'p1',
      tool: 'log_watcher',
      status: 'running',
      since: expect.any(String),
    })
    expect(p2.body).toMatchObject({ process: 'p2', status: 'running' })

    appendFileSync(a, 'ERROR disk full\nall fine\n')
    appendFileSync(b, 'ERROR b down\nWARN b slow\n')
    const first = await mailUntil(call, 's1', both(2))
    expect(linesOf(first, 'process:p1')).toEqual(['ERROR disk full'])
    expect(linesOf(first, 'process:p2')).toEqual(['ERROR b down'])

    const sent = await call(
      'log_watcher.send',
      { process: 'p1', event: { op: 'pattern', value: 'WARN' } },
      's1',
    )
    expect(sent.body).toEqual({ accepted: true, events: [{ notice: 'pattern is now /WARN/' }] })
    appendFileSync(a, 'WARN a slow\nERROR a again\n')
    appendFileSync(b, 'WARN b slower\nERROR b again\n')
    const second = await mailUntil(call, 's1', both(2))
    // The notice answered the send, so it is not mail too (decision 0020, amended 2026-12-03).
    expect(linesOf(second, 'process:p1')).toEqual(['WARN a slow'])
    expect(linesOf(second, 'process:p2')).toEqual(['ERROR b again'])

    const list = await call('processes', { command: 'list' }, 's1')
    expect(
      list.body.processes.map((p: { process: string; kind: string; status: string }) => [
        p.process,
        p.kind,
        p.status,
      ]),
    ).toEqual([
      ['p1', 'service', 'running'],
      ['p2', 'service', 'running'],
    ])
    const status = await call('processes', { command: 'status', process: 'p1' }, 's1')
    expect(status.body).toMatchObject({
      process: 'p1',
      tool: 'log_watcher',
      status: 'running',
      on_exit: 'report',
      restarts: [],
    })
    expect(status.body.input).toMatchObject({ required: ['op'] })
    expect(status.body.counters).toMatchObject({ events: 3, stdinEvents: 1 })
    const tail = await call('processes', { command: 'tail', process: 'p2', n: 5 }, 's1')
    expect(tail.body.events.map((e: { line: string }) => e.line)).toEqual(['ERROR b down', 'ERROR b again'])

    const pid1 = tasks.process('p1', 's1').pid!
    const pid2 = tasks.process('p2', 's1').pid!
    // Its declared cancel is {"send": {"op": "stop"}}: it exits 0 by itself, no signal needed.
    // Stopped by the host (the model was shown nothing of it), its end is mail.
    expect(await tasks.cancel('p1', 's1')).toMatchObject({ code: 0, reason: 'cancelled' })
    const ended = await mailUntil(call, 's1', (m) => m.some((e) => e.kind === 'completion'))
    expect(ended.find((e) => e.kind === 'completion')).toMatchObject({
      id: 'exit-p1',
      from: 'process:p1',
      body: {
        process: 'p1',
        tool: 'log_watcher',
        status: 'exited (0)',
        exitCode: 0,
        reason: 'cancelled',
        restarts: 0,
      },
    })
    expect(alive(pid1)).toBe(false)
    // Stopped by the model, the answer shows the end: no completion mail on top (decision 0104).
    const stop = await call('processes', { command: 'stop', process: 'p2' }, 's1')
    expect(stop.body).toEqual(cancelled('p2', 0))
    const after = await call('processes', { command: 'wait', timeout_seconds: 1 }, 's1')
    expect((after.body.mail as Array<{ kind: string }>).filter((m) => m.kind === 'completion')).toEqual([])
    expect(alive(pid2)).toBe(false)

    await sessions.close('s1')
    expect(tasks.get('p2', 's1').lifecycle).toEqual({ status: 'exited', code: 0, signal: null })
  })

  it('refuses an event that does not match input.event, writes nothing, and the process runs on', async () => {
    const { call, tasks } = await compose({ replyMs: 300 })
    expect((await call('echoer', { greeting: 'hello' }, 's1')).body).toMatchObject({ process: 'p1' })
    const bad = await call('echoer.send', { process: 'p1', event: { say: 3 } }, 's1')
    expect(bad).toEqual({
      isError: true,
      body: {
        error:
          "echoer.send: the event does not match echoer's input.event: $.event.say: must be string; nothing was written, p1 is untouched",
      },
    })
    expect(
      (await call('echoer.send', { process: 'p1', event: { say: 'x', loud: true } }, 's1')).body.error,
    ).toBe(
      `echoer.send: the event does not match echoer's input.event: $.event: must NOT have additional properties: "loud"; nothing was written, p1 is untouched`,
    )
    expect((await call('echoer.send', { process: 'p1' }, 's1')).body.error).toBe(
      'echoer.send: "event" is required: the event to send, as the input schema says',
    )
    expect((await call('echoer.send', { process: 'p1', event: {}, extra: 1 }, 's1')).body.error).toBe(
      'echoer.send: unknown argument "extra": the arguments are "process" and "event"',
    )
    expect(tasks.process('p1', 's1').output.counters().stdinEvents).toBe(0)
    expect(tasks.get('p1', 's1').lifecycle.status).toBe('running')
    // The stdin argument was written first and stdin stayed open for events.
    expect(await eventually(() => tasks.process('p1', 's1').output.counters().events === 1)).toBe(true)
    const good = await call('echoer.send', { process: 'p1', event: { say: 'hi', times: 2 } }, 's1')
    expect(good.body).toEqual({
      accepted: true,
      events: [{ got: { say: 'hi', times: 2 } }, { got: { say: 'hi', times: 2 } }],
    })
    const tail = await call('processes', { command: 'tail', process: 'p1' }, 's1')
    expect(tail.body.events[0]).toEqual({ got: 'hello' })
  })

  it('serves a send companion per service family that declares input, unless the host leaves it out', async () => {
    const { tools } = await compose({ omitSend: ['log_watcher'] })
    expect(tools.get('echoer__send')?.inputSchema).toMatchObject({
      properties: { event: { type: 'object', required: ['say'], additionalProperties: false } },
      required: ['process', 'event'],
    })
    expect(tools.get('log_watcher.send')).toBeUndefined()
    expect(tools.get('crasher.send')).toBeUndefined() // no process.input: nothing can be sent
    expect(tools.get('log_watcher')).toBeDefined()
  })

  it("keeps one session out of another's processes: send, read, wait, stop, list", async () => {
    const { call, tasks } = await compose({ replyMs: 200 })
    expect((await call('echoer', {}, 'alice')).body).toMatchObject({ process: 'p1' })
    expect((await call('processes', { command: 'list' }, 'bob')).body).toEqual({ processes: [] })
    const foreign = { error: 'task p1 belongs to another session' }
    expect((await call('echoer.send', { process: 'p1', event: { say: 'x' } }, 'bob')).body).toEqual({
      error: 'echoer.send: task p1 belongs to another session',
    })
    for (const args of [
      { command: 'status', process: 'p1' },
      { command: 'tail', process: 'p1' },
      { command: 'read', process: 'p1' },
      { command: 'output', process: 'p1' },
      { command: 'wait', process: 'p1', timeout_seconds: 1 },
      { command: 'stop', process: 'p1' },
    ]) {
      expect(await call('processes', args, 'bob')).toEqual({ isError: true, body: foreign })
    }
    expect(tasks.process('p1', 'alice').output.counters().stdinEvents).toBe(0)
    expect(tasks.get('p1', 'alice').lifecycle.status).toBe('running')
    // bob's own first service has a handle of its own: p1 is alice's.
    expect((await call('echoer', {}, 'bob')).body).toMatchObject({ process: 'p2' })
    expect((await call('processes', { command: 'list' }, 'bob')).body.processes).toHaveLength(1)
    expect((await call('processes', { command: 'list' }, 'alice')).body.processes).toHaveLength(1)
  })

  it('refuses a send to a process of another family, to a stream task, and to one that ended', async () => {
    const { call } = await compose({ replyMs: 100 })
    const dir = tempDir()
    writeFileSync(join(dir, 'x.log'), '')
    await call('echoer', {}, 's1')
    await call('log_watcher', { file: join(dir, 'x.log') }, 's1')
    await call('ticker', { count: 1000 }, 's1')
    expect((await call('echoer.send', { process: 'p2', event: { say: 'x' } }, 's1')).body.error).toBe(
      'echoer.send: p2 is a log_watcher process, not a echoer one: send to it with log_watcher.send',
    )
    expect((await call('echoer.send', { process: 't1', event: { say: 'x' } }, 's1')).body.error).toBe(
      'echoer.send: t1 is a stream task of ticker, not a service: nothing can be sent to it',
    )
    await call('processes', { command: 'stop', process: 'p1' }, 's1')
    expect((await call('echoer.send', { process: 'p1', event: { say: 'x' } }, 's1')).body.error).toBe(
      'echoer.send: p1 is exited (SIGTERM): nothing was written (start echoer again for a new process)',
    )
    expect((await call('echoer.send', { process: 'p9', event: { say: 'x' } }, 's1')).body.error).toBe(
      'echoer.send: no task p9',
    )
  })

  it('needs a session to start a service', async () => {
    const { tools } = await compose()
    const result = await tools.call('echoer', {}, { signal: new AbortController().signal })
    expect(result.content[0]!.text).toBe(
      'echoer: a service needs a session (its output is mail to the session that starts it); call it with a session id; nothing was started',
    )
  })
})

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}
