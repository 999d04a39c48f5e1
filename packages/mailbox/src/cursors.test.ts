import { describe, expect, it } from 'vitest'
import { MailboxErrorCodes } from './errors.js'
import { sizeOf } from './internal/batch.js'
import { createMailbox } from './mailbox.js'

function withMail(count: number, options: Parameters<typeof createMailbox>[0] = {}) {
  const mailbox = createMailbox(options)
  mailbox.open('s1')
  for (let i = 1; i <= count; i++) mailbox.post('s1', { from: 'task:t1', kind: 'event', body: i })
  return mailbox
}

const bodies = (page: { envelopes: readonly { body: unknown }[] }) => page.envelopes.map((e) => e.body)

describe('readers are cursors', () => {
  it('deliver returns the unread mail and advances only the delivery cursor', () => {
    const mailbox = withMail(3)
    expect(bodies(mailbox.deliver('s1'))).toEqual([1, 2, 3])
    expect(mailbox.cursor('s1')).toBe(3)
    expect(mailbox.cursor('s1', 'operator')).toBe(0)
    expect(mailbox.unread('s1')).toBe(0)
    expect(bodies(mailbox.deliver('s1'))).toEqual([])
    mailbox.post('s1', { from: 'system', kind: 'event', body: 4 })
    expect(bodies(mailbox.deliver('s1'))).toEqual([4])
  })

  it('a named reader reads everything without moving the delivery cursor, and the other way round', () => {
    const mailbox = withMail(2)
    expect(bodies(mailbox.read('s1', 'operator'))).toEqual([1, 2])
    expect(mailbox.unread('s1')).toBe(2)
    expect(mailbox.cursor('s1')).toBe(0)
    expect(bodies(mailbox.read('s1', 'operator'))).toEqual([])
    expect(bodies(mailbox.read('s1', 'host'))).toEqual([1, 2])
    expect(bodies(mailbox.deliver('s1'))).toEqual([1, 2])
    mailbox.post('s1', { from: 'system', kind: 'event', body: 3 })
    expect(bodies(mailbox.read('s1', 'operator'))).toEqual([3])
    expect(mailbox.cursor('s1', 'operator')).toBe(3)
    expect(mailbox.unread('s1')).toBe(1)
  })

  it('reading never consumes: a page by seq moves no cursor', () => {
    const mailbox = withMail(5)
    expect(mailbox.page('s1', { after: 1, max: 2 })).toMatchObject({ next: 3, more: true })
    expect(bodies(mailbox.page('s1', { after: 1, max: 2 }))).toEqual([2, 3])
    expect(mailbox.page('s1', { after: 3, max: 2 })).toMatchObject({ next: 5, more: false })
    expect(mailbox.page('s1', { after: 5 })).toEqual({ envelopes: [], next: 5, more: false })
    expect(mailbox.unread('s1')).toBe(5)
  })
})

describe('paging and keeping read mail', () => {
  it('deliver and read page with max, leaving the rest for the next call', () => {
    const mailbox = withMail(5)
    const first = mailbox.deliver('s1', { max: 2 })
    expect([bodies(first), first.more, mailbox.unread('s1')]).toEqual([[1, 2], true, 3])
    expect(bodies(mailbox.deliver('s1'))).toEqual([3, 4, 5])
    expect(bodies(mailbox.read('s1', 'ui', { max: 4 }))).toEqual([1, 2, 3, 4])
    expect(bodies(mailbox.read('s1', 'ui', { max: 4 }))).toEqual([5])
  })

  it('reads within a byte bound, and always at least one envelope so a reader moves on', () => {
    const mailbox = withMail(5)
    const one = sizeOf(mailbox.page('s1').envelopes[0])
    expect(mailbox.page('s1', { after: 1, maxBytes: one * 2.5 })).toMatchObject({ next: 3, more: true })
    const first = mailbox.deliver('s1', { maxBytes: 1 })
    expect([bodies(first), first.more, mailbox.cursor('s1')]).toEqual([[1], true, 1])
    expect(bodies(mailbox.read('s1', 'mcp', { max: 3, maxBytes: one * 10 }))).toEqual([1, 2, 3])
    expect(bodies(mailbox.deliver('s1', { maxBytes: one * 10 }))).toEqual([2, 3, 4, 5])
  })

  it('keeps keepRead seqs of delivered mail readable, and lets older delivered mail go', () => {
    const mailbox = withMail(10, { keepRead: 3 })
    mailbox.deliver('s1', { max: 8 })
    expect(bodies(mailbox.page('s1'))).toEqual([6, 7, 8, 9, 10])
    expect(bodies(mailbox.read('s1', 'late'))).toEqual([6, 7, 8, 9, 10])
  })

  it('refuses the delivery cursor and an empty name as a reader', () => {
    const mailbox = withMail(1)
    expect(() => mailbox.read('s1', 'delivery')).toThrow(
      'mailbox: reader "delivery" cannot be used; name your own non-empty cursor ("delivery" is the ' +
        "session's, moved only by deliver())",
    )
    try {
      mailbox.read('s1', '')
      expect.unreachable()
    } catch (error) {
      expect((error as { code?: string }).code).toBe(MailboxErrorCodes.INVALID_READER)
    }
    expect(mailbox.unread('s1')).toBe(1)
  })

  it('tells onDeliver listeners of each batch the delivery point hands out, and of nothing else', () => {
    const mailbox = withMail(3)
    const told: string[] = []
    const off = mailbox.onDeliver((session, envelopes) => told.push(`${session}: ${bodies({ envelopes })}`))
    mailbox.onDeliver(() => {
      throw new Error('a listener bug')
    })
    const warned = new Promise((resolve) => process.once('warning', resolve))
    mailbox.read('s1', 'operator')
    mailbox.deliver('s1', { max: 2 })
    mailbox.deliver('s1')
    mailbox.deliver('s1')
    off()
    mailbox.post('s1', { from: 'system', kind: 'control', body: 9 })
    mailbox.deliver('s1')
    expect(told).toEqual(['s1: 1,2', 's1: 3'])
    return warned
  })
})
