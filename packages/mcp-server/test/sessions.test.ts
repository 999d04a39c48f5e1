import { createSessions } from '@toolvisor/tasks'
import { createToolRegistry } from '@toolvisor/toolbox'
import { describe, expect, it } from 'vitest'
import { connect, text, tool } from './helpers.js'

function whoAmI() {
  const tools = createToolRegistry()
  tools.register(tool('whoami', async (_args, ctx) => text(ctx.sessionId ?? '(none)')))
  return tools
}

describe('sessions', () => {
  it('a connection opens its session, and closing it closes the session (its close hooks run)', async () => {
    const sessions = createSessions()
    const closed: string[] = []
    sessions.onClose((session, why) => {
      closed.push(`${session.id} ${why}`)
    })
    const { client, surface } = await connect(whoAmI(), { sessions, sessionId: 'agent-1' })
    expect(sessions.list().map((s) => [s.id, s.origin])).toEqual([['agent-1', 'mcp']])
    const answer = await client.callTool({ name: 'whoami', arguments: {} })
    expect(answer.content).toEqual([{ type: 'text', text: 'agent-1' }])
    await client.close()
    await surface.closed
    expect(closed).toEqual(['agent-1 disconnected'])
    expect(sessions.list()).toEqual([])
  })

  it('with keepSession the session outlives the connection, and a new connection with its id reopens it', async () => {
    const sessions = createSessions()
    let closes = 0
    sessions.onClose(() => {
      closes++
    })
    const first = await connect(whoAmI(), {
      sessions,
      sessionId: 'agent-2',
      keepSession: true,
      origin: 'mcp-http',
    })
    await first.client.close()
    await first.surface.closed
    expect(closes).toBe(0)
    expect(sessions.get('agent-2')).toMatchObject({ opens: 1, origin: 'mcp-http' })
    const second = await connect(whoAmI(), { sessions, sessionId: 'agent-2', keepSession: true })
    expect(sessions.get('agent-2')).toMatchObject({ opens: 2 })
    expect((await second.client.callTool({ name: 'whoami', arguments: {} })).content).toEqual([
      { type: 'text', text: 'agent-2' },
    ])
    await second.client.close()
    await second.surface.closed
    await sessions.close('agent-2')
    expect(closes).toBe(1)
  })

  it('a close hook that fails is logged, and the connection still ends', async () => {
    const sessions = createSessions()
    sessions.onClose(() => {
      throw new Error('store gone')
    })
    const { client, surface, logs } = await connect(whoAmI(), { sessions, sessionId: 'agent-3' })
    await client.close()
    await surface.closed
    expect(logs).toContain(
      'toolvisor-test: closing session agent-3: sessions.close: 1 close hook(s) of session agent-3 failed',
    )
    expect(sessions.list()).toEqual([])
  })
})
