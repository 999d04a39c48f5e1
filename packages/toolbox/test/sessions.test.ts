// Sessions as the toolbox meets them: a call opens its session, a closed one has its tasks stopped
// (the sessions service itself is tested in @toolvisor/tasks).
import { describe, expect, it } from 'vitest'
import { compose, ctx, examples } from './helpers.js'

describe('sessions in the toolbox plugin', () => {
  it('a closed session has every task it owns stopped; another session keeps its own; a reopened one finds its task', async () => {
    const { tools, tasks, sessions } = await compose([examples], { yieldMs: 0 })
    const alice = sessions.open({ id: 'alice', origin: 'test' })
    const bob = sessions.open({ id: 'bob', origin: 'test' })
    const counter = { to: 100_000, 'every-ms': 50 }
    await tools.call('counter', counter, ctx({ sessionId: alice.id }))
    await tools.call('counter', counter, ctx({ sessionId: bob.id }))
    const [aliceTask] = tasks.list(alice.id)
    const [bobTask] = tasks.list(bob.id)
    expect([aliceTask?.lifecycle.status, bobTask?.lifecycle.status]).toEqual(['running', 'running'])

    // The client of alice came back with its id: the same session, with what it owns.
    expect(sessions.open({ id: 'alice' }).opens).toBe(2)
    expect(tasks.list('alice').map((t) => t.id)).toEqual([aliceTask!.id])

    await sessions.close('alice', 'disconnected')
    expect(tasks.get(aliceTask!.id, 'alice')).toMatchObject({ exit: { reason: 'cancelled' } })
    expect(tasks.get(bobTask!.id, 'bob').lifecycle.status).toBe('running')
    expect(sessions.list().map((s) => s.id)).toEqual(['bob'])
  })
})

describe('a call in a session nobody opened', () => {
  it('opens it (once), and refuses an id that is not a session id without running the tool', async () => {
    const { tools, sessions } = await compose([examples])
    const opened: string[] = []
    sessions.onOpen((s) => opened.push(s.id))
    expect((await tools.call('word_count', { text: 'a b' }, ctx({ sessionId: 'host-1' }))).isError).toBe(
      false,
    )
    await tools.call('word_count', { text: 'a b' }, ctx({ sessionId: 'host-1' }))
    expect(opened).toEqual(['host-1'])
    expect(sessions.get('host-1')).toMatchObject({ origin: 'host', opens: 1 })
    const bad = await tools.call('word_count', { text: 'a' }, ctx({ sessionId: 'a b' }))
    expect(bad).toMatchObject({ isError: true })
    expect(bad.content[0]!.text).toBe(
      'word_count: sessions.open: id "a b" is not a session id: use 1 to 128 characters of A-Z a-z 0-9 . _ : @ -; the tool was not run',
    )
  })
})
