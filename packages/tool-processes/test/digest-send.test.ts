import { appendFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Envelope } from '@toolvisor/mailbox'
import { eventually } from '@toolvisor/process-runtime/testing'
import { describe, expect, it } from 'vitest'
import { compose, eventsFrom, type MailJson, mailUntil, tempDir } from './helpers.js'

/** A feed file for `feeder`, and a way to add lines to it. */
function feedFile() {
  const feed = join(tempDir(), 'feed')
  writeFileSync(feed, '')
  return {
    feed,
    add: (...lines: string[]) => appendFileSync(feed, lines.map((line) => `${line}\n`).join('')),
  }
}

/** The bodies of the event and digest envelopes of `from`, each envelope as its list of events. */
const groups = (mail: readonly (MailJson | Envelope)[], from = 'process:p1') =>
  mail
    .filter((m) => m.from === from && (m.kind === 'event' || m.kind === 'digest'))
    .map((m) => (m.kind === 'digest' ? (m.body as unknown[]) : [m.body]))

describe('a digest per events (ruling 15; issue 28, audit D-3)', () => {
  it('mails every 3 events; a delivery point leaves the rest pending, status shows it, the exit mails it', async () => {
    const { call, tasks, mail } = await compose({ replyMs: 200 })
    const { feed, add } = feedFile()
    expect((await call('feeder', { feed }, 's1')).body).toMatchObject({ process: 'p1', status: 'running' })
    const events = () => tasks.process('p1', 's1').output.counters().events
    add('a')
    expect(await eventually(() => events() === 1)).toBe(true)
    // The delivery point (any tool result that folds mail) does not cut the digest short.
    expect(mail.deliver('s1').envelopes).toEqual([])
    const status = await call('processes', { command: 'status', process: 'p1' }, 's1')
    expect(status.body.mail).toEqual({ digest: { per: 'events', n: 3 }, pending: 1 })
    expect(mail.deliver('s1').envelopes).toEqual([])

    add('b', 'c')
    const three = await mailUntil(call, 's1', (got) => groups(got).length > 0)
    expect(groups(three)).toEqual([[{ line: 'a' }, { line: 'b' }, { line: 'c' }]])
    expect((await call('processes', { command: 'status', process: 'p1' }, 's1')).body.mail.pending).toBe(0)

    add('d')
    expect(await eventually(() => events() === 4)).toBe(true)
    expect(mail.deliver('s1').envelopes).toEqual([])
    // Exiting by itself (a send that makes it exit 5) mails the remainder, then the completion.
    const sent = await call('feeder.send', { process: 'p1', event: { exit: 5 } }, 's1')
    expect(sent.body).toEqual({ accepted: true, events: [], status: 'exited (5)' })
    const end = await mailUntil(call, 's1', (got) => got.some((m) => m.kind === 'completion'))
    expect(end.map((m) => [m.kind, m.body])).toEqual([
      ['event', { line: 'd' }],
      ['completion', expect.objectContaining({ process: 'p1', status: 'exited (5)', exitCode: 5 })],
    ])
    expect((await call('processes', { command: 'status', process: 'p1' }, 's1')).body.mail).toEqual({
      digest: { per: 'events', n: 3 },
      pending: 0,
    })
  })

  it('mails the remainder at a stop too', async () => {
    const { call, tasks, mail } = await compose()
    const { feed, add } = feedFile()
    await call('feeder', { feed }, 's1')
    add('a', 'b')
    expect(await eventually(() => tasks.process('p1', 's1').output.counters().events === 2)).toBe(true)
    expect(mail.deliver('s1').envelopes).toEqual([])
    await call('processes', { command: 'stop', process: 'p1' }, 's1')
    const page = mail.deliver('s1').envelopes
    expect(groups(page)).toEqual([[{ line: 'a' }, { line: 'b' }]])
    // The stop's answer showed the end: its completion is not mailed on top (decision 0104).
    expect(page.map((envelope) => envelope.kind)).toEqual(['digest'])
  })

  it('mails the remainder once the operator’s bound (digestFlushMs) passed, while the process runs on', async () => {
    const { call, tasks } = await compose({}, {}, { digestFlushMs: 300 })
    const { feed, add } = feedFile()
    await call('feeder', { feed }, 's1')
    add('a')
    // `processes wait` delivers only when an envelope wakes it: the bound made this one.
    const got = await mailUntil(call, 's1', (mail) => groups(mail).length > 0)
    expect(got.map((m) => [m.kind, m.body])).toEqual([['event', { line: 'a' }]])
    expect(tasks.get('p1', 's1').lifecycle.status).toBe('running')
  })
})

describe('a send answers its reply, and the reply is not mail too (issue 28, audit D-7; decision 0020)', () => {
  it('keeps the reply out of the mail and out of the digest count; later events are mail', async () => {
    const { call, tasks, mail } = await compose({ replyMs: 300 })
    const { feed, add } = feedFile()
    await call('feeder', { feed }, 's1')
    add('a')
    expect(await eventually(() => tasks.process('p1', 's1').output.counters().events === 1)).toBe(true)
    const sent = await call('feeder.send', { process: 'p1', event: { say: 'hi', times: 2 } }, 's1')
    expect(sent.body).toEqual({ accepted: true, events: [{ got: 'hi' }, { got: 'hi' }] })
    expect(tasks.process('p1', 's1').output.counters().events).toBe(3)
    // Three events were produced, but the two of the reply count for no digest: one is pending.
    expect(mail.deliver('s1').envelopes).toEqual([])
    expect((await call('processes', { command: 'status', process: 'p1' }, 's1')).body.mail.pending).toBe(1)
    add('b', 'c')
    const got = await mailUntil(call, 's1', (m) => groups(m).length > 0)
    expect(groups(got)).toEqual([[{ line: 'a' }, { line: 'b' }, { line: 'c' }]])
    await call('processes', { command: 'stop', process: 'p1' }, 's1')
    const all = mail.page('s1').envelopes
    expect(JSON.stringify(all)).not.toContain('"got"')
    expect(all.reduce((sum, envelope) => sum + envelope.events, 0)).toBe(3)
  })

  it('mails, under a round digest, nothing of the reply: neither at the send nor at the next delivery point', async () => {
    const { call, mail } = await compose({ replyMs: 300 })
    await call('echoer', {}, 's1')
    const sent = await call('echoer.send', { process: 'p1', event: { say: 'hi' } }, 's1')
    expect(sent.body).toEqual({ accepted: true, events: [{ got: { say: 'hi' } }] })
    expect(mail.deliver('s1').envelopes).toEqual([])
    const again = await call('echoer.send', { process: 'p1', event: { say: 'again', times: 3 } }, 's1')
    expect(again.body.events).toHaveLength(3)
    expect(mail.deliver('s1').envelopes).toEqual([])
  })

  it('mails the events of the window that the answer could not hold, and only those', async () => {
    // A budget of 512 bytes of room plus 60: the first event fits, the others do not.
    const { call, mail, tasks } = await compose({ replyMs: 300, resultBytes: 512 + 60 })
    await call('echoer', {}, 's1')
    const sent = await call('echoer.send', { process: 'p1', event: { say: 'x'.repeat(20), times: 4 } }, 's1')
    expect(sent.body).toMatchObject({ accepted: true, elided: 3 })
    expect(sent.body.events).toEqual([{ got: { say: 'x'.repeat(20), times: 4 } }])
    expect(sent.body.note).toBe(
      '3 more events came within the window than this answer holds; they come as mail from process:p1 (processes {"command":"tail","process":"p1"} shows them too)',
    )
    expect(tasks.process('p1', 's1').output.counters().events).toBe(4)
    const page = mail.deliver('s1').envelopes
    expect(page.map((e) => [e.kind, e.events])).toEqual([['digest', 3]])
    expect(eventsFrom(page as unknown as MailJson[], 'process:p1')).toHaveLength(3)
  })

  it('mails what a send had taken when its caller goes before the answer', async () => {
    const { tools, tasks, mail, call } = await compose({ replyMs: 20_000 })
    await call('echoer', {}, 's1')
    const caller = new AbortController()
    const sending = tools.call(
      'echoer.send',
      { process: 'p1', event: { say: 'bye' } },
      { sessionId: 's1', signal: caller.signal },
    )
    expect(await eventually(() => tasks.process('p1', 's1').output.counters().events === 1)).toBe(true)
    expect(mail.deliver('s1').envelopes).toEqual([])
    caller.abort()
    await sending
    expect(mail.deliver('s1').envelopes.map((e) => e.body)).toEqual([{ got: { say: 'bye' } }])
  })
})
