import { Kernel, KernelError } from '@toolvisor/kernel'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { MailboxError, MailboxErrorCodes } from './errors.js'
import { MailboxToken, mailboxPlugin } from './plugin.js'

afterEach(() => {
  vi.useRealTimers()
})

describe('mailboxPlugin', () => {
  it('provides the mailbox under the mailbox token, bounded at 256 unread by default', async () => {
    await using kernel = new Kernel()
    const handle = kernel.use(mailboxPlugin)
    await handle
    expect([mailboxPlugin.name, MailboxToken.key, handle.state]).toEqual(['mailbox', 'mailbox', 'active'])
    const mailbox = kernel.get(MailboxToken)!
    mailbox.open('s1')
    for (let i = 0; i < 300; i++) mailbox.post('s1', { from: 'process:p1', kind: 'event', body: i })
    expect(mailbox.unread('s1')).toBeLessThanOrEqual(256)
    const envelopes = mailbox.deliver('s1').envelopes
    expect(envelopes.reduce((sum, e) => sum + e.events, 0)).toBe(300)
  })

  it('takes its bounds from the config and refuses a bad one naming the field', async () => {
    await using kernel = new Kernel()
    expect(() => kernel.use(mailboxPlugin, { maxUnread: -1 })).toThrow(KernelError)
    expect(() => kernel.use(mailboxPlugin, { maxUnread: 2, envelopeBytes: 'big' } as never)).toThrow(
      /config\.envelopeBytes/,
    )
    await kernel.use(mailboxPlugin, { maxUnread: 2 })
    const mailbox = kernel.get(MailboxToken)!
    mailbox.open('s1')
    for (let i = 0; i < 5; i++) mailbox.post('s1', { from: 'process:p1', kind: 'event', body: i })
    expect(mailbox.unread('s1')).toBe(2)
  })

  it('disposal flushes every source, clears every digest timer and ends every wait', async () => {
    vi.useFakeTimers()
    const kernel = new Kernel()
    await kernel.use(mailboxPlugin)
    const mailbox = kernel.get(MailboxToken)!
    mailbox.open('s1')
    const source = mailbox.source('s1', 'process:p1', { per: 'seconds', n: 5 })
    source.push('a')
    mailbox.setWakeOn('s1', [])
    const waiting = mailbox.wait('s1', { timeoutMs: 60_000 })
    expect(vi.getTimerCount()).toBe(2)
    await kernel.dispose()
    expect(vi.getTimerCount()).toBe(0)
    await expect(waiting).resolves.toEqual({ reason: 'closed' })
    expect(source.counters()).toMatchObject({ events: 1, mailed: 1, pending: 0 })
    expect(source.closed).toBe(true)
    try {
      mailbox.deliver('s1')
      expect.unreachable()
    } catch (error) {
      expect(MailboxError.is(error) && error.code).toBe(MailboxErrorCodes.DISPOSED)
    }
  })
})

describe('the README', () => {
  it('runs the README example', async () => {
    await using kernel = new Kernel()
    const spec = { process: { digest: { per: 'round' } as const } }
    const signal = new AbortController().signal
    await kernel.use(mailboxPlugin, { maxUnread: 256 })
    const mailbox = kernel.get(MailboxToken)!
    mailbox.open('s1', { wakeOn: ['process:', 'task:', 'system'] })
    const p1 = mailbox.source('s1', 'process:p1', spec.process.digest)
    p1.push({ line: 'disk full', level: 'error' })
    const woke = await mailbox.wait('s1', { timeoutMs: 30_000, signal })
    const { envelopes } = mailbox.deliver('s1')
    p1.close({ exit: 0 })
    mailbox.post('s1', { id: 'done-t3', from: 'task:t3', kind: 'completion', body: { exit: 0 } })
    expect(woke).toEqual({ reason: 'mail', from: 'process:p1' })
    expect(envelopes).toEqual([
      {
        id: 'm1',
        seq: 1,
        from: 'process:p1',
        at: envelopes[0]?.at,
        kind: 'event',
        body: { line: 'disk full', level: 'error' },
        events: 1,
        omitted: 0,
      },
    ])
    expect(mailbox.deliver('s1').envelopes.map((e) => [e.id, e.kind])).toEqual([
      ['m2', 'completion'],
      ['done-t3', 'completion'],
    ])
  })
})
