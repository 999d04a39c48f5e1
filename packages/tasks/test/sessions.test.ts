import { describe, expect, it } from 'vitest'
import { createSessions } from '../src/sessions.js'

describe('sessions', () => {
  it('opens a session with a generated id, or with the id given, and lists the open ones', () => {
    const sessions = createSessions()
    const fresh = sessions.open()
    expect(fresh.id).toMatch(/^s-[0-9a-f-]{36}$/)
    expect(fresh).toMatchObject({ origin: 'host', opens: 1 })
    const named = sessions.open({ id: 'claude-1', origin: 'mcp-stdio' })
    expect(sessions.list().map((s) => [s.id, s.origin])).toEqual([
      [fresh.id, 'host'],
      ['claude-1', 'mcp-stdio'],
    ])
    expect(sessions.get('claude-1')).toEqual(named)
    expect(sessions.get('nobody')).toBeUndefined()
  })

  it('reopening an open id is the same session, counted: open hooks do not run again', () => {
    const sessions = createSessions()
    const opened: string[] = []
    sessions.onOpen((s) => opened.push(s.id))
    const first = sessions.open({ id: 'a' })
    const again = sessions.open({ id: 'a' })
    expect(again).toMatchObject({ id: 'a', opens: 2, openedAt: first.openedAt })
    expect(sessions.list()).toHaveLength(1)
    expect(opened).toEqual(['a'])
  })

  it('notes the client of an open session (the latest), bounded, and ignores an unknown one', () => {
    const sessions = createSessions()
    sessions.open({ id: 'a' })
    sessions.note('a', { client: 'claude-code 2.1.197' })
    sessions.note('a', { client: `codex ${'x'.repeat(500)}` })
    expect(sessions.get('a')?.client).toBe(`codex ${'x'.repeat(194)}`)
    sessions.note('gone', { client: 'c' })
    expect(sessions.get('gone')).toBeUndefined()
  })

  it('refuses an id that is not one, saying what an id may hold', () => {
    const sessions = createSessions()
    for (const id of ['', 'a b', 'x'.repeat(129), 'tab\there', '../etc']) {
      expect(() => sessions.open({ id })).toThrow(/is not a session id: use 1 to 128 characters/)
    }
    expect(() => sessions.open({ id: 7 as unknown as string })).toThrow(
      'sessions.open: id 7 is not a session id',
    )
    expect(sessions.list()).toEqual([])
  })

  it("keeps the session's working directory, replaced by a reopen that gives one; refuses a relative one", () => {
    const sessions = createSessions()
    expect(sessions.open({ id: 'a', cwd: '/work/project' }).cwd).toBe('/work/project')
    expect(sessions.open({ id: 'a' }).cwd).toBe('/work/project')
    expect(sessions.open({ id: 'a', cwd: '/elsewhere' }).cwd).toBe('/elsewhere')
    expect(sessions.open({ id: 'b' })).not.toHaveProperty('cwd')
    expect(() => sessions.open({ id: 'c', cwd: 'project' })).toThrow(
      expect.objectContaining({
        code: 'TASKS_ERR_BAD_SESSION_CWD',
        message: 'sessions.open: cwd "project" of session c is not an absolute path',
      }),
    )
    expect(sessions.get('c')).toBeUndefined()
  })

  it('close forgets the session first, then runs every hook newest first, even past one that throws', async () => {
    const sessions = createSessions()
    const heard: string[] = []
    sessions.onClose((s, why) => {
      heard.push(`first ${s.id} ${why} open=${sessions.get(s.id) !== undefined}`)
    })
    sessions.onClose(() => {
      throw new Error('mailbox store is gone')
    })
    sessions.onClose(async (s) => {
      await new Promise((resolve) => setImmediate(resolve))
      heard.push(`last ${s.id}`)
    })
    sessions.open({ id: 'a' })
    const closing = sessions.close('a', 'disconnected')
    await expect(closing).rejects.toThrow('sessions.close: 1 close hook(s) of session a failed')
    await closing.catch((error: AggregateError) => {
      expect(error.errors.map((e: Error) => e.message)).toEqual(['mailbox store is gone'])
    })
    expect(heard).toEqual(['last a', 'first a disconnected open=false'])
    await expect(sessions.close('a')).rejects.toThrow(
      'sessions.close: no open session "a" (never opened, or already closed)',
    )
    // Opening the id again makes a new session.
    expect(sessions.open({ id: 'a' }).opens).toBe(1)
  })

  it('an open hook that throws fails the open, and leaves no session behind', () => {
    const sessions = createSessions()
    const off = sessions.onOpen(() => {
      throw new Error('no room')
    })
    expect(() => sessions.open({ id: 'a' })).toThrow('no room')
    expect(sessions.list()).toEqual([])
    off()
    expect(sessions.open({ id: 'a' }).id).toBe('a')
  })

  it('an unregistered hook no longer runs', async () => {
    const sessions = createSessions()
    let closes = 0
    const off = sessions.onClose(() => {
      closes++
    })
    sessions.open({ id: 'a' })
    sessions.open({ id: 'b' })
    await sessions.close('a')
    off()
    await sessions.close('b')
    expect(closes).toBe(1)
  })
})
