// The mail notice in its 2026-07-28 form (decision 0109, point 4): the resource `toolvisor://mail`,
// listed the same for every session and read to deliver what waits for the caller's session, and
// `notifications/resources/updated` on a listen stream that subscribed to it when mail arrives.
// Over HTTP a stream hears only its own session's mail. A 2025 client keeps its logging notice.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { createMailbox } from '@toolvisor/mailbox'
import { eventually } from '@toolvisor/process-runtime/testing'
import { createSessions } from '@toolvisor/tasks'
import { createToolRegistry } from '@toolvisor/toolbox'
import { afterEach, describe, expect, it } from 'vitest'
import { serveHttp } from '../src/index.js'
import { text, tool, waitFor } from './helpers.js'
import { closedAfter, TOKEN } from './http-helpers.js'

const clients: Client[] = []
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => {})
})

/** A registry of one tool that answers and mails nothing. */
function quiet() {
  const tools = createToolRegistry()
  tools.register(tool('noop', async () => text('nothing')))
  return tools
}

/** serveHttp with a mailbox, closed after the test. */
async function serving() {
  const mailbox = createMailbox()
  const server = closedAfter(
    await serveHttp(quiet(), {
      name: 'mail-test',
      version: '0',
      listen: { host: '127.0.0.1', port: 0 },
      token: TOKEN,
      sessions: createSessions(),
      mailbox,
      log: () => {},
    }),
  )
  return { server, mailbox }
}

async function client(url: string, session: string) {
  const updates: string[] = []
  const c = new Client(
    { name: 'mail-2026', version: '0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  )
  c.setNotificationHandler('notifications/resources/updated', (notification) => {
    updates.push(notification.params.uri)
  })
  clients.push(c)
  await c.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${TOKEN}`, 'x-toolvisor-session': session } },
    }),
  )
  return { client: c, updates }
}

async function read(c: Client): Promise<string> {
  const { contents } = await c.readResource({ uri: 'toolvisor://mail' })
  return contents.map((item) => ('text' in item ? item.text : '')).join('\n')
}

describe('the mail of a 2026-07-28 client over HTTP', () => {
  it('is the resource toolvisor://mail: listed alike, read per session, told on its own listen stream only', async () => {
    const { server, mailbox } = await serving()
    const a = await client(server.url, 'alpha')
    const b = await client(server.url, 'beta')
    expect(a.client.getServerCapabilities()?.resources).toEqual({ subscribe: true })
    expect(a.client.getServerCapabilities()?.logging).toBeUndefined()
    const listed = (await a.client.listResources()).resources
    expect(listed.map((r) => r.uri)).toEqual(['toolvisor://mail'])
    expect((await b.client.listResources()).resources).toEqual(listed)
    expect(await read(a.client)).toBe('no mail waits for this session')

    const subscriptions = await Promise.all(
      [a, b].map((c) => c.client.listen({ resourceSubscriptions: ['toolvisor://mail'] })),
    )
    for (const s of subscriptions) expect(s.honoredFilter.resourceSubscriptions).toEqual(['toolvisor://mail'])
    // Mail posted to alpha by something else than a call (a process), between two calls.
    mailbox.post('alpha', { id: 'm-away', from: 'process:p1', kind: 'event', body: { word: 'away' } })
    await waitFor(() => a.updates.length === 1, 5000, "alpha's update")
    expect(a.updates).toEqual(['toolvisor://mail'])
    // Beta heard nothing of alpha's mail, and reads none of it.
    expect(await eventually(() => b.updates.length > 0, 300)).toBe(false)
    expect(await read(b.client)).toBe('no mail waits for this session')
    const mail = await read(a.client)
    expect(mail).toMatch(/^\[mail m-away from process:p1\] /)
    expect(mail).toContain('"word":"away"')
    // Read once: delivered.
    expect(await read(a.client)).toBe('no mail waits for this session')
    for (const s of subscriptions) await s.close()
  })

  it('refuses a resource it does not have, naming the one it has', async () => {
    const { server } = await serving()
    const a = await client(server.url, 'alpha')
    await expect(a.client.readResource({ uri: 'file:///etc/passwd' })).rejects.toThrow(
      /no resource "file:\/\/\/etc\/passwd": this server has one, toolvisor:\/\/mail/,
    )
  })
})
