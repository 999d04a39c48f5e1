// The 2026-07-28 era on stdio (decision 0109, points 1 and 2): the v2 client pinned to that
// revision talks to the stdio fixture as a subprocess, the command a 2025 client talks to. It
// discovers the server, lists and calls the tools of the connection's session, hears of a new tool
// through its listen subscription, gets an escalation asked by an `input_required` round (a
// replayed, altered or moved state refused), hears of mail through the resource toolvisor://mail,
// and has the 2025 task parameter ignored. A client that probes with `server/discover` and then opens
// with `initialize` is served 2025 in the same session. Every test ends with the server process gone.
import { Client } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { afterEach, describe, expect, it } from 'vitest'
import { waitFor } from './helpers.js'
import { retry, roundOne } from './mrtr.js'
import { alive, fixture, fixtureTools, runFixture } from './stdio-helpers.js'

const closers: Array<() => Promise<void>> = []
afterEach(async () => {
  while (closers.length > 0) await closers.pop()!()
})

/**
 * A v2 client pinned to 2026-07-28 on the fixture (with `env` added), told of tool list changes.
 * `manual`: `input_required` answers come back to the test instead of being fulfilled.
 */
async function modernClient(
  env: Record<string, string> = {},
  how: { readonly manual?: boolean; readonly elicitation?: boolean } = {},
) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [fixture],
    env: { ...(process.env as Record<string, string>), ...env },
    stderr: 'pipe',
  })
  const changes: string[][] = []
  const client = new Client(
    { name: 'era-2026', version: '0.0.1' },
    {
      capabilities: how.elicitation === false ? {} : { elicitation: { form: {} } },
      versionNegotiation: { mode: { pin: '2026-07-28' } },
      ...(how.manual ? { inputRequired: { autoFulfill: false } } : {}),
      listChanged: {
        tools: {
          onChanged: (error, tools) => {
            if (error === null && tools !== null) changes.push(tools.map((tool) => tool.name))
          },
        },
      },
    },
  )
  let stderr = ''
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  await client.connect(transport)
  const pid = transport.pid!
  closers.push(async () => {
    await client.close()
    await waitFor(() => !alive(pid), 10_000, 'the server process to exit')
  })
  return { client, changes, pid, stderr: () => stderr }
}

describe('serveStdio to a 2026-07-28 client', () => {
  it('is discovered in that era, lists the tools a 2025 client sees, and calls one in the session', async () => {
    const { client, stderr } = await modernClient()
    expect(client.getProtocolEra()).toBe('modern')
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28')
    expect(client.getServerVersion()).toMatchObject({ name: 'fixture', version: '0.0.0' })
    // The 2025 tasks are not this revision's: nothing says the server has them.
    expect(client.getServerCapabilities()?.tasks).toBeUndefined()

    const { tools } = await client.listTools()
    expect(tools.map((tool) => tool.name)).toEqual(fixtureTools)
    const result = await client.callTool({ name: 'say__hello', arguments: { who: 'modern' } })
    expect(result.content).toEqual([{ type: 'text', text: 'hello modern from stdio-session' }])
    expect(result.isError).toBeFalsy()
    // What is served is logged once, though the 2025 server waiting at start gave way to another.
    expect(stderr().match(/serving \d+ tools/g)).toHaveLength(1)
    expect(stderr()).toContain('fixture: the client speaks MCP 2026-07-28\n')
  })

  it('serves a client that probes with server/discover and then speaks 2025, in the same session', async () => {
    const server = runFixture()
    const envelope = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
    }
    server.send({ jsonrpc: '2.0', id: 'probe', method: 'server/discover', params: { _meta: envelope } })
    const discovered = await server.waitForMessage((m) => m.id === 'probe', 'the discover answer')
    expect(discovered.result?.supportedVersions).toEqual(['2026-07-28'])
    const initialized = await server.initialize(1)
    expect(initialized.result?.protocolVersion).toBe('2025-06-18')
    server.send({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'say__hello', arguments: { who: 'late' } },
    })
    const called = await server.waitForMessage((m) => m.id === 2, 'the call answer')
    expect(called.result?.content).toEqual([{ type: 'text', text: 'hello late from stdio-session' }])
    server.child.stdin.end()
    expect(await server.exited).toBe(0)
    expect(server.stderr.text()).toContain('fixture: served, stopped by the client')
  })

  it('tells of a new tool through the listen subscription', async () => {
    const { client, changes } = await modernClient()
    await client.listTools()
    const added = await client.callTool({ name: 'add__tool', arguments: { name: 'late.one' } })
    expect(added.content).toEqual([{ type: 'text', text: 'added late.one' }])
    await waitFor(() => changes.some((names) => names.includes('late__one')), 10_000, 'the tools change')
    expect(changes.at(-1)).toEqual([...fixtureTools, 'late__one'])
  })

  it('ignores the 2025 task parameter: under the Tasks extension the server decides', async () => {
    const { client } = await modernClient()
    const result = await client.request({
      method: 'tools/call',
      params: { name: 'say__hello', arguments: { who: 'x' }, task: { ttl: 60_000 } },
    })
    expect(result.content).toEqual([{ type: 'text', text: 'hello x from stdio-session' }])
  })

  it('asks an escalation by an input_required round, and the retry carries the answer', async () => {
    const answers = ['accept', 'decline', 'cancel'] as const
    const messages: string[] = []
    const { client } = await modernClient({ FIXTURE_APPROVALS: '1' })
    client.setRequestHandler('elicitation/create', async (request) => {
      messages.push(String(request.params.message))
      return { action: answers[messages.length - 1]!, ...(messages.length === 1 ? { content: {} } : {}) }
    })
    const outcomes: unknown[] = []
    for (const command of ['touch /etc/a', 'touch /etc/b', 'touch /etc/c']) {
      const result = await client.callTool({ name: 'escalate', arguments: { command } })
      outcomes.push(result.content)
    }
    expect(outcomes).toEqual([
      [{ type: 'text', text: 'approval: allowed-once' }],
      [{ type: 'text', text: 'approval: rejected' }],
      [{ type: 'text', text: 'approval: cancelled' }],
    ])
    // The user saw each exact command, in the words of decision 0093.
    expect(messages.map((message) => /touch \/etc\/\w/.exec(message)?.[0])).toEqual([
      'touch /etc/a',
      'touch /etc/b',
      'touch /etc/c',
    ])
  })

  it('refuses a replayed, altered or moved requestState, and a state of another server', async () => {
    const { client } = await modernClient({ FIXTURE_APPROVALS: '1' }, { manual: true })
    const params = { name: 'escalate', arguments: { command: 'touch /etc/x' } }
    const asked = await roundOne(client, params)
    expect(asked.inputRequests).toEqual({
      approval: expect.objectContaining({ method: 'elicitation/create' }),
    })
    const accept = { approval: { action: 'accept', content: {} } }
    // An altered state (a character of its claims changed) and a state for another command.
    const altered = `${asked.requestState.slice(0, 10)}${asked.requestState[10] === 'A' ? 'B' : 'A'}${asked.requestState.slice(11)}`
    await expect(retry(client, params, accept, altered)).rejects.toThrow(
      /not a state this server issued, or it was altered/,
    )
    const other = { ...params, arguments: { command: 'touch /etc/y' } }
    await expect(retry(client, other, accept, asked.requestState)).rejects.toThrow(
      /issued for other arguments/,
    )
    // Presented once already (with the other command): spent, whatever that retry was.
    await expect(retry(client, params, accept, asked.requestState)).rejects.toThrow(/good for one retry/)

    const again = await roundOne(client, params)
    expect(await retry(client, params, accept, again.requestState)).toMatchObject({
      content: [{ type: 'text', text: 'approval: allowed-once' }],
    })
    await expect(retry(client, params, accept, again.requestState)).rejects.toThrow(/good for one retry/)

    // Another toolvisor (another key) never accepts this one's state.
    const { client: second } = await modernClient({ FIXTURE_APPROVALS: '1' }, { manual: true })
    const third = await roundOne(client, params)
    await expect(retry(second, params, accept, third.requestState)).rejects.toThrow(
      /not a state this server issued/,
    )
  })

  it('binds the network names into the state: shown in the question, a retry for other names refused', async () => {
    const { client } = await modernClient({ FIXTURE_APPROVALS: '1' }, { manual: true })
    const params = {
      name: 'escalate',
      arguments: { command: 'curl http://unlisted.test/', network: ['unlisted.test'] },
    }
    const asked = await roundOne(client, params)
    const message = String((asked.inputRequests.approval as { params: { message: string } }).params.message)
    expect(message).toContain(
      'The network names it may also reach for this call, 1 name:\n```\n1 | unlisted.test\n```',
    )
    const accept = { approval: { action: 'accept', content: {} } }
    const other = { ...params, arguments: { ...params.arguments, network: ['other.test'] } }
    await expect(retry(client, other, accept, asked.requestState)).rejects.toThrow(
      expect.objectContaining({ code: -32602, message: expect.stringMatching(/issued for other arguments/) }),
    )
    const again = await roundOne(client, params)
    expect(await retry(client, params, accept, again.requestState)).toMatchObject({
      content: [{ type: 'text', text: 'approval: allowed-once' }],
    })
  })

  it('tells a listen stream of mail through the resource toolvisor://mail, and reading it delivers the mail', async () => {
    const { client } = await modernClient({ FIXTURE_MAIL: '1' })
    const updates: string[] = []
    client.setNotificationHandler('notifications/resources/updated', (notification) => {
      updates.push(notification.params.uri)
    })
    const subscription = await client.listen({ resourceSubscriptions: ['toolvisor://mail'] })
    expect(subscription.honoredFilter.resourceSubscriptions).toEqual(['toolvisor://mail'])
    const later = await client.callTool({ name: 'mail__later', arguments: { word: 'ping' } })
    expect(later.content).toEqual([{ type: 'text', text: 'later' }])
    await waitFor(() => updates.length === 1, 5000, 'the resource update')
    const { contents } = await client.readResource({ uri: 'toolvisor://mail' })
    expect(contents).toEqual([
      {
        uri: 'toolvisor://mail',
        mimeType: 'text/plain',
        text: expect.stringMatching(/^\[mail m-ping from process:p1\] .*"word":"ping"/),
      },
    ])
    await subscription.close()
  })

  it('refuses an escalation closed for a client that cannot be asked: no round, nothing allowed', async () => {
    const { client } = await modernClient({ FIXTURE_APPROVALS: '1' }, { elicitation: false })
    const result = await client.callTool({ name: 'escalate', arguments: {} })
    expect(result.content).toEqual([{ type: 'text', text: 'approval: unavailable' }])
    expect(result.isError).toBe(true)
  })
})
