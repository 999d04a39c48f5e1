import { describe, expect, it } from 'vitest'
import { fixtureTools, runFixture } from './stdio-helpers.js'

describe('tools registered after the server started', () => {
  it('are announced with one notifications/tools/list_changed per change, and logged', async () => {
    const server = runFixture()
    const init = await server.initialize()
    expect(init.result?.capabilities).toEqual({ tools: { listChanged: true } })
    server.send({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'add__tool', arguments: { name: 'late.one' } },
    })
    await server.waitForMessage((m) => m.method === 'notifications/tools/list_changed', 'the announcement')
    server.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' })
    const listed = await server.waitForMessage((m) => m.id === 2, 'the list')
    expect((listed.result!.tools as { name: string }[]).map((t) => t.name)).toEqual([
      ...fixtureTools,
      'late__one',
    ])
    expect(server.messages().filter((m) => m.method === 'notifications/tools/list_changed')).toEqual([
      { jsonrpc: '2.0', method: 'notifications/tools/list_changed' },
    ])
    expect(server.stderr.text()).toContain('fixture: tools changed: serving 7 tools (1 failed to load)\n')
  })
})
