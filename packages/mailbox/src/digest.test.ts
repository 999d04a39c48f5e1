import { afterEach, describe, expect, it, vi } from 'vitest'
import type { DigestPolicy } from './envelope.js'
import { MailboxErrorCodes } from './errors.js'
import { createMailbox } from './mailbox.js'

function withSource(digest?: DigestPolicy, options: Parameters<typeof createMailbox>[0] = {}) {
  const mailbox = createMailbox(options)
  mailbox.open('s1')
  return { mailbox, source: mailbox.source('s1', 'process:p1', digest) }
}

const shapes = (mailbox: ReturnType<typeof createMailbox>) =>
  mailbox.deliver('s1').envelopes.map((e) => [e.kind, e.body, e.events, e.omitted])

afterEach(() => {
  vi.useRealTimers()
})

describe('digest per round (the default)', () => {
  it('mails everything since the last delivery point as one envelope at the delivery point', () => {
    const { mailbox, source } = withSource()
    expect(source.digest).toEqual({ per: 'round' })
    for (const line of ['a', 'b', 'c']) source.push({ line })
    expect(mailbox.unread('s1')).toBe(0)
    expect(shapes(mailbox)).toEqual([['digest', [{ line: 'a' }, { line: 'b' }, { line: 'c' }], 3, 0]])
    source.push({ line: 'd' })
    expect(shapes(mailbox)).toEqual([['event', { line: 'd' }, 1, 0]])
    expect(shapes(mailbox)).toEqual([])
  })

  it('flushes at close, then posts the final body as a completion', () => {
    const { mailbox, source } = withSource()
    source.push('a')
    source.push('b')
    const receipt = source.close({ exit: 0 })
    expect(receipt).toMatchObject({ seq: 2, duplicate: false })
    expect(source.close({ exit: 1 })).toBeUndefined()
    expect(shapes(mailbox)).toEqual([
      ['digest', ['a', 'b'], 2, 0],
      ['completion', { exit: 0 }, 0, 0],
    ])
    expect(() => source.flush()).toThrow(
      'mailbox: cannot flush: the source of process:p1 in session "s1" is closed; open a new one with ' +
        'mailbox.source() if the session is still open',
    )
    expect(mailbox.source('s1', 'process:p1').closed).toBe(false)
  })

  it('keeps the newest events within the byte bound and counts the others as omitted', () => {
    const { mailbox, source } = withSource({ per: 'round' }, { envelopeBytes: 14 })
    for (const event of ['aaa', 'bbb', 'ccc', 'x'.repeat(40), 'ddd']) source.push(event)
    expect(source.counters()).toEqual({ events: 5, mailed: 0, pending: 5, pendingBytes: 13, envelopes: 0 })
    expect(shapes(mailbox)).toEqual([['digest', ['ccc', 'ddd'], 5, 3]])
    expect(source.counters()).toEqual({ events: 5, mailed: 5, pending: 0, pendingBytes: 0, envelopes: 1 })
  })

  it('keeps at most envelopeEvents events in one body', () => {
    const { mailbox, source } = withSource({ per: 'round' }, { envelopeEvents: 2 })
    for (let i = 0; i < 5; i++) source.push(i)
    expect(shapes(mailbox)).toEqual([['digest', [3, 4], 5, 3]])
  })
})

describe('digest per events', () => {
  it('mails an envelope every n events; the remainder stays pending at a delivery point', () => {
    const { mailbox, source } = withSource({ per: 'events', n: 2 })
    for (let i = 1; i <= 5; i++) source.push(i)
    expect(mailbox.unread('s1')).toBe(2)
    expect(shapes(mailbox)).toEqual([
      ['digest', [1, 2], 2, 0],
      ['digest', [3, 4], 2, 0],
    ])
    expect(source.counters()).toMatchObject({ events: 5, mailed: 4, pending: 1, envelopes: 2 })
    source.push(6)
    expect(shapes(mailbox)).toEqual([['digest', [5, 6], 2, 0]])
  })

  it('with n = 3, one event at a delivery point is no mail; two more make one envelope of 3 (ruling 15)', () => {
    const { mailbox, source } = withSource({ per: 'events', n: 3 })
    source.push('a')
    expect(shapes(mailbox)).toEqual([])
    expect(source.counters()).toMatchObject({ events: 1, mailed: 0, pending: 1 })
    source.push('b')
    expect(shapes(mailbox)).toEqual([])
    source.push('c')
    expect(shapes(mailbox)).toEqual([['digest', ['a', 'b', 'c'], 3, 0]])
    expect(source.counters()).toMatchObject({ events: 3, mailed: 3, pending: 0, envelopes: 1 })
  })

  it('mails the remainder digestFlushMs after its first event, and only then (default 30 s)', async () => {
    vi.useFakeTimers()
    const { mailbox, source } = withSource({ per: 'events', n: 3 })
    source.push('a')
    await vi.advanceTimersByTimeAsync(29_000)
    source.push('b')
    expect(shapes(mailbox)).toEqual([])
    await vi.advanceTimersByTimeAsync(1000)
    expect(vi.getTimerCount()).toBe(0)
    expect(shapes(mailbox)).toEqual([['digest', ['a', 'b'], 2, 0]])
    // A full envelope clears the bound; the next event starts its own.
    for (const event of ['c', 'd', 'e']) source.push(event)
    expect(vi.getTimerCount()).toBe(0)
    source.push('f')
    expect(vi.getTimerCount()).toBe(1)
    expect(shapes(mailbox)).toEqual([['digest', ['c', 'd', 'e'], 3, 0]])
  })

  it('takes the bound from the operator: digestFlushMs, 0 for none', async () => {
    vi.useFakeTimers()
    const { mailbox, source } = withSource({ per: 'events', n: 3 }, { digestFlushMs: 50 })
    source.push('a')
    await vi.advanceTimersByTimeAsync(50)
    expect(shapes(mailbox)).toEqual([['event', 'a', 1, 0]])
    const never = withSource({ per: 'events', n: 3 }, { digestFlushMs: 0 })
    never.source.push('a')
    expect(vi.getTimerCount()).toBe(0)
    await vi.advanceTimersByTimeAsync(3_600_000)
    expect(shapes(never.mailbox)).toEqual([])
    expect(never.source.flush()?.body).toBe('a')
    expect(() => createMailbox({ digestFlushMs: -1 })).toThrow(
      'mailbox: invalid options: options.digestFlushMs: Too small: expected number to be >=0',
    )
  })

  it('wakes a waiting session when the bound mails the remainder', async () => {
    vi.useFakeTimers()
    const { mailbox, source } = withSource({ per: 'events', n: 3 }, { digestFlushMs: 100 })
    const waiting = mailbox.wait('s1', { timeoutMs: 1000 })
    source.push('a')
    await vi.advanceTimersByTimeAsync(100)
    await expect(waiting).resolves.toEqual({ reason: 'mail', from: 'process:p1' })
  })

  it('with n = 1 mails each event as itself', () => {
    const { mailbox, source } = withSource({ per: 'events', n: 1 })
    source.push({ line: 'x', level: 'error' })
    expect(mailbox.page('s1').envelopes[0]).toMatchObject({
      kind: 'event',
      body: { line: 'x', level: 'error' },
    })
  })

  it('mails the remainder at close, at flush, at closeSession, and clears its bound', () => {
    vi.useFakeTimers()
    const { mailbox, source } = withSource({ per: 'events', n: 10 })
    source.push(1)
    source.close()
    expect(vi.getTimerCount()).toBe(0)
    expect(shapes(mailbox)).toEqual([['event', 1, 1, 0]])
    const again = mailbox.source('s1', 'process:p1', { per: 'events', n: 10 })
    again.push(2)
    again.push(3)
    expect(again.flush()).toMatchObject({ kind: 'digest', body: [2, 3] })
    again.push(4)
    expect(mailbox.closeSession('s1').map((e) => e.body)).toEqual([[2, 3], 4])
    expect(vi.getTimerCount()).toBe(0)
  })
})

describe('digest per seconds', () => {
  it('mails n seconds after the first event not yet mailed, then waits for the next event', async () => {
    vi.useFakeTimers()
    const { mailbox, source } = withSource({ per: 'seconds', n: 2 })
    source.push('a')
    await vi.advanceTimersByTimeAsync(1000)
    source.push('b')
    expect(mailbox.unread('s1')).toBe(0)
    await vi.advanceTimersByTimeAsync(1000)
    expect(mailbox.unread('s1')).toBe(1)
    expect(vi.getTimerCount()).toBe(0)
    source.push('c')
    await vi.advanceTimersByTimeAsync(2000)
    expect(shapes(mailbox)).toEqual([
      ['digest', ['a', 'b'], 2, 0],
      ['event', 'c', 1, 0],
    ])
  })

  it('mails pending events at the delivery point and clears the timer', () => {
    vi.useFakeTimers()
    const { mailbox, source } = withSource({ per: 'seconds', n: 60 })
    source.push('a')
    expect(vi.getTimerCount()).toBe(1)
    expect(shapes(mailbox)).toEqual([['event', 'a', 1, 0]])
    expect(vi.getTimerCount()).toBe(0)
  })

  it('clears its timer at close, at closeSession and at dispose', () => {
    vi.useFakeTimers()
    const { mailbox, source } = withSource({ per: 'seconds', n: 60 })
    source.push('a')
    source.close()
    const other = mailbox.source('s1', 'task:t1', { per: 'seconds', n: 1 })
    other.push('b')
    expect(vi.getTimerCount()).toBe(1)
    expect(mailbox.closeSession('s1').map((e) => e.body)).toEqual(['a', 'b'])
    expect(vi.getTimerCount()).toBe(0)
    mailbox.open('s2')
    mailbox.source('s2', 'process:p1', { per: 'seconds', n: 1 }).push('c')
    mailbox.dispose()
    expect(vi.getTimerCount()).toBe(0)
  })
})

describe('sources', () => {
  it('posts completion and control mail after flushing its events', () => {
    const { mailbox, source } = withSource({ per: 'events', n: 5 })
    source.push('a')
    expect(source.post({ id: 'restart-1', kind: 'control', body: { restart: 1 } })).toEqual({
      id: 'restart-1',
      seq: 2,
      duplicate: false,
    })
    expect(shapes(mailbox)).toEqual([
      ['event', 'a', 1, 0],
      ['control', { restart: 1 }, 0, 0],
    ])
  })

  it('refuses a second open source for one sender, and a digest policy it does not know', () => {
    const { mailbox } = withSource()
    expect(() => mailbox.source('s1', 'process:p1')).toThrow(
      'mailbox: session "s1" already has an open source for process:p1; close it before opening another',
    )
    for (const digest of [
      { per: 'events', n: 0 },
      { per: 'events', n: 1.5 },
      { per: 'seconds', n: 0 },
      { per: 'hour' },
    ]) {
      try {
        mailbox.source('s1', 'process:p2', digest as DigestPolicy)
        expect.unreachable()
      } catch (error) {
        expect((error as { code?: string }).code).toBe(MailboxErrorCodes.INVALID_DIGEST)
      }
    }
    expect(() => mailbox.source('s1', 'process:p2', { per: 'events', n: 0 })).toThrow(
      'mailbox: digest {"per":"events","n":0} for process:p2 is not {"per":"round"}, ' +
        '{"per":"events","n":<whole number >= 1>} or {"per":"seconds","n":<number > 0>}',
    )
  })

  it('stays open when its final body is over the bound, so the close can be retried', () => {
    const { mailbox, source } = withSource({ per: 'round' }, { envelopeBytes: 16 })
    source.push('a')
    expect(() => source.close({ tail: 'x'.repeat(20) })).toThrow(/over the envelope bound of 16/)
    expect(source.closed).toBe(false)
    expect(source.close({ exit: 0 })?.duplicate).toBe(false)
    expect(shapes(mailbox).map(([kind]) => kind)).toEqual(['event', 'completion'])
  })

  it('pushing into a source of a closed session is an error, not a lost event', () => {
    const { mailbox, source } = withSource()
    mailbox.closeSession('s1')
    expect(() => source.push('late')).toThrow(/^mailbox: cannot push: the source of process:p1/)
  })
})
