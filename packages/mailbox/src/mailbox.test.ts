import { describe, expect, it } from 'vitest'
import { MailboxError, MailboxErrorCodes } from './errors.js'
import { createMailbox } from './mailbox.js'
import { createMemoryStore } from './store.js'

function opened(options: Parameters<typeof createMailbox>[0] = {}) {
  const mailbox = createMailbox(options)
  mailbox.open('s1')
  return mailbox
}

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn()
  } catch (error) {
    if (MailboxError.is(error)) return error.code
    throw error
  }
  return undefined
}

describe('post', () => {
  it('accepts an envelope with seq, an ISO time and its accounting', () => {
    const mailbox = opened()
    const receipt = mailbox.post('s1', { from: 'process:p1', kind: 'event', body: { line: 'a' } })
    expect(receipt).toEqual({ id: 'm1', seq: 1, duplicate: false })
    const [envelope] = mailbox.page('s1').envelopes
    expect(envelope).toMatchObject({
      id: 'm1',
      seq: 1,
      from: 'process:p1',
      kind: 'event',
      events: 1,
      omitted: 0,
    })
    expect(envelope?.body).toEqual({ line: 'a' })
    expect(new Date(envelope!.at).toISOString()).toBe(envelope?.at)
    expect(Object.isFrozen(envelope)).toBe(true)
  })

  it('is idempotent on the id: a second post keeps the first and returns its seq', () => {
    const mailbox = opened()
    mailbox.post('s1', { from: 'system', kind: 'control', body: 'first' })
    const first = mailbox.post('s1', {
      id: 'done-t3',
      from: 'task:t3',
      kind: 'completion',
      body: { code: 0 },
    })
    const second = mailbox.post('s1', {
      id: 'done-t3',
      from: 'task:t3',
      kind: 'completion',
      body: { code: 1 },
    })
    expect(first).toEqual({ id: 'done-t3', seq: 2, duplicate: false })
    expect(second).toEqual({ id: 'done-t3', seq: 2, duplicate: true })
    const envelopes = mailbox.page('s1').envelopes
    expect(envelopes.map((e) => e.id)).toEqual(['m1', 'done-t3'])
    expect(envelopes[1]?.body).toEqual({ code: 0 })
  })

  it('remembers an id after its envelope was delivered and trimmed', () => {
    const mailbox = opened({ keepRead: 0 })
    mailbox.post('s1', { id: 'e1', from: 'task:t1', kind: 'event', body: 1 })
    mailbox.deliver('s1')
    expect(mailbox.page('s1').envelopes).toEqual([])
    expect(mailbox.post('s1', { id: 'e1', from: 'task:t1', kind: 'event', body: 1 })).toEqual({
      id: 'e1',
      seq: 1,
      duplicate: true,
    })
  })
})

describe('what post refuses', () => {
  it('refuses a digest kind, an empty id and the ids reserved to the mailbox', () => {
    const mailbox = opened()
    const digest = { from: 'system', kind: 'digest', body: [] } as never
    expect(codeOf(() => mailbox.post('s1', digest))).toBe(MailboxErrorCodes.INVALID_ENVELOPE)
    expect(codeOf(() => mailbox.post('s1', { id: '', from: 'system', kind: 'event', body: 1 }))).toBe(
      MailboxErrorCodes.INVALID_ENVELOPE,
    )
    expect(() => mailbox.post('s1', { id: 'm7', from: 'system', kind: 'event', body: 1 })).toThrow(
      'mailbox: post to session "s1" from system: id "m7" is not allowed; give a non-empty id not of the ' +
        'form m<digits> (reserved to the mailbox), or none',
    )
    expect(mailbox.unread('s1')).toBe(0)
  })

  it('refuses a sender that is not process:<id>, task:<id> or system', () => {
    const mailbox = opened()
    for (const from of ['user', 'process:', 'task', 'System', 'process: p1']) {
      expect(codeOf(() => mailbox.post('s1', { from: from as never, kind: 'event', body: 1 }))).toBe(
        MailboxErrorCodes.INVALID_SENDER,
      )
    }
    expect(() => mailbox.source('s1', 'user' as never)).toThrow(
      'mailbox: sender "user" is not "process:<id>", "task:<id>" or "system"',
    )
  })

  it('never cuts a completion: one over the envelope bound is refused, nothing stored', () => {
    const mailbox = opened({ envelopeBytes: 16 })
    expect(() => mailbox.post('s1', { from: 'task:t1', kind: 'completion', body: 'x'.repeat(20) })).toThrow(
      'mailbox: the completion body from task:t1 to session "s1" is 22 bytes of JSON, over the envelope ' +
        'bound of 16; completion envelopes are never cut: shorten the body (tails, details)',
    )
    expect(mailbox.unread('s1')).toBe(0)
  })

  it('counts a posted event over the bound as omitted instead of storing it', () => {
    const mailbox = opened({ envelopeBytes: 16 })
    mailbox.post('s1', { from: 'process:p1', kind: 'event', body: 'x'.repeat(20) })
    expect(mailbox.page('s1').envelopes[0]).toMatchObject({ kind: 'digest', body: [], events: 1, omitted: 1 })
  })

  it('flushes the sender’s source before a completion, so it never overtakes its events', () => {
    const mailbox = opened()
    const source = mailbox.source('s1', 'process:p1')
    source.push('a')
    mailbox.post('s1', { from: 'process:p1', kind: 'completion', body: { exit: 0 } })
    expect(mailbox.page('s1').envelopes.map((e) => [e.kind, e.body])).toEqual([
      ['event', 'a'],
      ['completion', { exit: 0 }],
    ])
  })
})

describe('sessions', () => {
  it('refuses every use of a session that is not open, and never opens one implicitly', () => {
    const mailbox = createMailbox()
    expect(() => mailbox.post('s9', { from: 'system', kind: 'event', body: 1 })).toThrow(
      'mailbox: no open session "s9"; open it with mailbox.open() first (a closed session\'s mail is ' +
        'gone, and mail is never posted into a session implicitly)',
    )
    expect(mailbox.isOpen('s9')).toBe(false)
    for (const use of [
      () => mailbox.deliver('s9'),
      () => mailbox.source('s9', 'system'),
      () => mailbox.unread('s9'),
    ]) {
      expect(codeOf(use)).toBe(MailboxErrorCodes.UNKNOWN_SESSION)
    }
  })

  it('closeSession flushes its sources, returns what it never delivered and forgets everything', async () => {
    const mailbox = opened()
    mailbox.post('s1', { from: 'system', kind: 'event', body: 'seen' })
    mailbox.deliver('s1')
    const source = mailbox.source('s1', 'process:p1')
    source.push('unseen')
    mailbox.setWakeOn('s1', [])
    const waiting = mailbox.wait('s1')
    const undelivered = mailbox.closeSession('s1')
    expect(undelivered.map((e) => e.body)).toEqual(['unseen'])
    await expect(waiting).resolves.toEqual({ reason: 'closed' })
    expect(source.closed).toBe(true)
    expect(codeOf(() => source.push('late'))).toBe(MailboxErrorCodes.SOURCE_CLOSED)
    expect(codeOf(() => mailbox.post('s1', { from: 'system', kind: 'event', body: 1 }))).toBe(
      MailboxErrorCodes.UNKNOWN_SESSION,
    )
    mailbox.open('s1')
    expect(mailbox.page('s1').envelopes).toEqual([])
    expect(mailbox.sessions()).toEqual(['s1'])
  })
})

describe('recovery and the end of a mailbox', () => {
  it('recovers a session’s mail and cursors from its store when opened again', () => {
    const store = createMemoryStore()
    const before = createMailbox({ store })
    before.open('s1')
    before.post('s1', { id: 'a', from: 'task:t1', kind: 'event', body: 1 })
    before.deliver('s1')
    before.post('s1', { from: 'task:t1', kind: 'event', body: 2 })
    before.dispose()
    expect(store.sessions()).toEqual(['s1'])
    const after = createMailbox({ store })
    after.open('s1')
    expect(after.unread('s1')).toBe(1)
    expect(after.post('s1', { id: 'a', from: 'task:t1', kind: 'event', body: 1 }).duplicate).toBe(true)
    expect(after.post('s1', { from: 'system', kind: 'event', body: 3 }).seq).toBe(3)
    expect(after.deliver('s1').envelopes.map((e) => e.body)).toEqual([2, 3])
  })

  it('is unusable once disposed', () => {
    const mailbox = opened()
    mailbox.dispose()
    mailbox.dispose()
    expect(() => mailbox.open('s2')).toThrow('mailbox: the mailbox is disposed; make a new one')
    expect(codeOf(() => mailbox.unread('s1'))).toBe(MailboxErrorCodes.DISPOSED)
  })

  it('validates its options', () => {
    expect(() => createMailbox({ maxUnread: 0 })).toThrow(/^mailbox: invalid options: options\.maxUnread: /)
    expect(codeOf(() => createMailbox({ keepRead: -1 }))).toBe(MailboxErrorCodes.INVALID_OPTIONS)
  })
})

describe('withdraw', () => {
  it("takes back a sender's undelivered mail of one kind, never delivered mail; a repost stays a repeat", () => {
    const mailbox = opened()
    const done = (id: string, from: 'task:t1' | 'task:t2') => ({
      id,
      from,
      kind: 'completion' as const,
      body: {},
    })
    mailbox.post('s1', done('old', 'task:t1'))
    expect(mailbox.deliver('s1').envelopes.map((e) => e.id)).toEqual(['old'])
    mailbox.post('s1', done('done-t1', 'task:t1'))
    mailbox.post('s1', { from: 'task:t1', kind: 'event', body: { n: 1 } })
    mailbox.post('s1', done('done-t2', 'task:t2'))
    expect(mailbox.unread('s1')).toBe(3)
    expect(mailbox.withdraw('s1', { from: 'task:t1', kind: 'completion' })).toBe(1)
    expect(mailbox.unread('s1')).toBe(2)
    expect(mailbox.post('s1', done('done-t1', 'task:t1'))).toMatchObject({ duplicate: true })
    expect(mailbox.deliver('s1').envelopes.map((e) => [e.from, e.kind])).toEqual([
      ['task:t1', 'event'],
      ['task:t2', 'completion'],
    ])
    expect(mailbox.withdraw('s1', { from: 'task:t1', kind: 'completion' })).toBe(0)
    expect(mailbox.page('s1').envelopes.map((e) => e.id)).toContain('old')
  })
})
