import { afterEach, describe, expect, it, vi } from 'vitest'
import { createMailbox } from './mailbox.js'
import type { SessionOptions } from './types.js'

function opened(options?: SessionOptions) {
  const mailbox = createMailbox()
  mailbox.open('s1', options)
  return mailbox
}

afterEach(() => {
  vi.useRealTimers()
})

describe('wait', () => {
  it('resolves when mail arrives', async () => {
    const mailbox = opened()
    const waiting = mailbox.wait('s1', { timeoutMs: 60_000 })
    mailbox.post('s1', { from: 'task:t3', kind: 'completion', body: { exit: 0 } })
    await expect(waiting).resolves.toEqual({ reason: 'mail', from: 'task:t3' })
    expect(mailbox.deliver('s1').envelopes).toHaveLength(1)
  })

  it('resolves at once when unread mail is there, and waits again once it was delivered', async () => {
    vi.useFakeTimers()
    const mailbox = opened()
    mailbox.post('s1', { from: 'system', kind: 'control', body: 'pause' })
    await expect(mailbox.wait('s1')).resolves.toEqual({ reason: 'mail', from: 'system' })
    mailbox.deliver('s1')
    const waiting = mailbox.wait('s1', { timeoutMs: 500 })
    await vi.advanceTimersByTimeAsync(500)
    await expect(waiting).resolves.toEqual({ reason: 'timeout' })
  })

  it('resolves with timeout when the bound passes', async () => {
    vi.useFakeTimers()
    const mailbox = opened()
    const waiting = mailbox.wait('s1', { timeoutMs: 30_000 })
    await vi.advanceTimersByTimeAsync(30_000)
    await expect(waiting).resolves.toEqual({ reason: 'timeout' })
    expect(vi.getTimerCount()).toBe(0)
  })

  it('resolves with aborted when the signal aborts, or at once when it already has', async () => {
    const mailbox = opened()
    const controller = new AbortController()
    const waiting = mailbox.wait('s1', { timeoutMs: 60_000, signal: controller.signal })
    controller.abort()
    await expect(waiting).resolves.toEqual({ reason: 'aborted' })
    await expect(mailbox.wait('s1', { signal: controller.signal })).resolves.toEqual({ reason: 'aborted' })
  })
})

describe('which senders wake a wait', () => {
  it('is not woken by a sender that does not wake the session, whose mail is still delivered', async () => {
    vi.useFakeTimers()
    const mailbox = opened({ wakeOn: ['process:', 'system'] })
    const waiting = mailbox.wait('s1', { timeoutMs: 1000 })
    mailbox.post('s1', { from: 'task:t1', kind: 'completion', body: 'quiet' })
    await vi.advanceTimersByTimeAsync(1000)
    await expect(waiting).resolves.toEqual({ reason: 'timeout' })
    const again = mailbox.wait('s1', { timeoutMs: 1000 })
    mailbox.post('s1', { from: 'process:p1', kind: 'event', body: 'loud' })
    await expect(again).resolves.toEqual({ reason: 'mail', from: 'process:p1' })
    expect(mailbox.deliver('s1').envelopes.map((e) => e.body)).toEqual(['quiet', 'loud'])
  })

  it('takes a predicate as the wake rule, and it can change while the session is open', async () => {
    const mailbox = opened()
    mailbox.setWakeOn('s1', (from) => from === 'process:p2')
    mailbox.post('s1', { from: 'process:p1', kind: 'event', body: 1 })
    const waiting = mailbox.wait('s1')
    mailbox.post('s1', { from: 'process:p2', kind: 'event', body: 2 })
    await expect(waiting).resolves.toEqual({ reason: 'mail', from: 'process:p2' })
    mailbox.open('s1', { wakeOn: [] })
    mailbox.deliver('s1')
    mailbox.post('s1', { from: 'process:p2', kind: 'event', body: 3 })
    const closing = mailbox.wait('s1')
    mailbox.dispose()
    await expect(closing).resolves.toEqual({ reason: 'closed' })
  })

  it('is woken by pending round events, which only the delivery point mails', async () => {
    const mailbox = opened()
    const source = mailbox.source('s1', 'process:p1')
    const waiting = mailbox.wait('s1')
    source.push('a')
    await expect(waiting).resolves.toEqual({ reason: 'mail', from: 'process:p1' })
    await expect(mailbox.wait('s1')).resolves.toEqual({ reason: 'mail', from: 'process:p1' })
    expect(mailbox.deliver('s1').envelopes.map((e) => e.body)).toEqual(['a'])
  })

  it('is not woken by events a count digest has not mailed yet', async () => {
    vi.useFakeTimers()
    const mailbox = opened()
    const source = mailbox.source('s1', 'process:p1', { per: 'events', n: 2 })
    const waiting = mailbox.wait('s1', { timeoutMs: 100 })
    source.push('a')
    await vi.advanceTimersByTimeAsync(100)
    await expect(waiting).resolves.toEqual({ reason: 'timeout' })
    const again = mailbox.wait('s1', { timeoutMs: 100 })
    source.push('b')
    await expect(again).resolves.toEqual({ reason: 'mail', from: 'process:p1' })
  })

  it('ends every wait of the session when it closes', async () => {
    const mailbox = opened()
    const waits = [mailbox.wait('s1'), mailbox.wait('s1', { timeoutMs: 60_000 })]
    mailbox.closeSession('s1')
    await expect(Promise.all(waits)).resolves.toEqual([{ reason: 'closed' }, { reason: 'closed' }])
  })
})

describe('a wait on some senders', () => {
  it('ends only on news from the senders it names, whatever else is unread', async () => {
    vi.useFakeTimers()
    const mailbox = opened()
    mailbox.post('s1', { from: 'process:p2', kind: 'event', body: 'other' })
    const waiting = mailbox.wait('s1', { timeoutMs: 1000, from: ['process:p1'] })
    mailbox.post('s1', { from: 'task:t1', kind: 'completion', body: 'still other' })
    await vi.advanceTimersByTimeAsync(1000)
    await expect(waiting).resolves.toEqual({ reason: 'timeout' })
    const again = mailbox.wait('s1', { timeoutMs: 1000, from: (from) => from === 'process:p1' })
    mailbox.source('s1', 'process:p1').push('mine')
    await expect(again).resolves.toEqual({ reason: 'mail', from: 'process:p1' })
    await expect(mailbox.wait('s1', { from: ['process:p1'] })).resolves.toEqual({
      reason: 'mail',
      from: 'process:p1',
    })
  })
})

describe('watch', () => {
  it('hears every piece of news that wakes the session, until it stops or the session closes', () => {
    const mailbox = opened({ wakeOn: ['process:'] })
    const heard: string[] = []
    const stop = mailbox.watch('s1', (from) => heard.push(from))
    const source = mailbox.source('s1', 'process:p1')
    source.push('a')
    source.push('b')
    mailbox.post('s1', { from: 'task:t1', kind: 'completion', body: 'does not wake' })
    mailbox.post('s1', { from: 'process:p2', kind: 'control', body: 'wakes' })
    expect(heard).toEqual(['process:p1', 'process:p1', 'process:p2'])
    stop()
    source.push('c')
    expect(heard).toHaveLength(3)
    mailbox.watch('s1', (from) => heard.push(from))
    mailbox.closeSession('s1')
    mailbox.open('s1')
    mailbox.post('s1', { from: 'process:p1', kind: 'event', body: 'after' })
    expect(heard).toHaveLength(3)
  })

  it('reports a watcher that throws as a warning, and the mail is accepted all the same', () => {
    const mailbox = opened()
    const warnings: unknown[] = []
    const onWarning = (warning: unknown) => warnings.push(warning)
    process.on('warning', onWarning)
    const emit = vi.spyOn(process, 'emitWarning')
    try {
      mailbox.watch('s1', () => {
        throw new Error('watcher bug')
      })
      mailbox.post('s1', { from: 'system', kind: 'control', body: 'x' })
      expect(emit).toHaveBeenCalledWith(expect.objectContaining({ message: 'watcher bug' }))
      expect(mailbox.unread('s1')).toBe(1)
    } finally {
      emit.mockRestore()
      process.off('warning', onWarning)
    }
  })

  it('needs an open session', () => {
    const mailbox = createMailbox()
    expect(() => mailbox.watch('nobody', () => {})).toThrow(
      expect.objectContaining({ code: 'MAILBOX_ERR_UNKNOWN_SESSION' }),
    )
  })
})
