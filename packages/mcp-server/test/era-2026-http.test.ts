// The 2026-07-28 era over Streamable HTTP (decision 0109, points 1 to 3): the v2 client pinned to
// that revision and the v1 client on one endpoint; the toolvisor session named by
// `x-toolvisor-session` on every 2026 request (refused without it); two clients naming one session
// share it, a client naming another sees its own; a new tool reaches a listen subscription; an
// escalation is an `input_required` round whose state another session cannot use.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { eventually } from '@toolvisor/process-runtime/testing'
import { createSessions } from '@toolvisor/tasks'
import { createToolRegistry } from '@toolvisor/toolbox'
import { afterEach, describe, expect, it } from 'vitest'
import { McpApprovals, serveHttp } from '../src/index.js'
import { escalateTool } from './fixtures/escalate-tool.mjs'
import { text, tool, waitFor } from './helpers.js'
import { closedAfter, TOKEN } from './http-helpers.js'
import { retry, roundOne } from './mrtr.js'

const clients: Array<{ close(): Promise<void> }> = []
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => {})
})

async function serve() {
  const tools = createToolRegistry()
  const approvals = new McpApprovals()
  tools.register(tool('whoami', async (_args, ctx) => text(ctx.sessionId ?? '(none)')))
  tools.register(escalateTool(approvals))
  const sessions = createSessions()
  const logs: string[] = []
  const server = closedAfter(
    await serveHttp(tools, {
      name: 'toolvisor-test',
      version: '1.0.0',
      listen: { host: '127.0.0.1', port: 0 },
      token: TOKEN,
      sessions,
      approvals,
      log: (line) => logs.push(line),
    }),
  )
  return { server, sessions, tools, logs }
}

/** A v2 client pinned to 2026-07-28, naming `session` (or none). */
async function modern(url: string, session: string | undefined, how: { readonly manual?: boolean } = {}) {
  const changes: string[][] = []
  const headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` }
  if (session !== undefined) headers['x-toolvisor-session'] = session
  const client = new Client(
    { name: 'era-2026-http', version: '0' },
    {
      capabilities: { elicitation: { form: {} } },
      versionNegotiation: { mode: { pin: '2026-07-28' } },
      ...(how.manual ? { inputRequired: { autoFulfill: false } } : {}),
      listChanged: {
        tools: {
          onChanged: (error, tools) => {
            if (error === null && tools !== null) changes.push(tools.map((t) => t.name))
          },
        },
      },
    },
  )
  clients.push(client)
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }))
  return { client, changes }
}

async function whoami(client: Pick<V1Client, 'callTool'> | Pick<Client, 'callTool'>): Promise<unknown> {
  return (await client.callTool({ name: 'whoami', arguments: {} })).content
}

describe('serveHttp to a 2026-07-28 client', () => {
  it('serves it beside a 2025 client on the same endpoint, in the session it names', async () => {
    const { server, sessions, logs } = await serve()
    const a = await modern(server.url, 'alpha')
    expect(a.client.getProtocolEra()).toBe('modern')
    expect((await a.client.listTools()).tools.map((t) => t.name)).toEqual(['whoami', 'escalate'])
    expect(await whoami(a.client)).toEqual([{ type: 'text', text: 'alpha' }])

    const old = new V1Client({ name: 'v1', version: '0' })
    clients.push(old)
    await old.connect(
      new V1Transport(new URL(server.url), {
        requestInit: { headers: { authorization: `Bearer ${TOKEN}`, 'x-toolvisor-session': 'alpha' } },
      }),
    )
    expect((await old.listTools()).tools.map((t) => t.name)).toEqual(['whoami', 'escalate'])
    expect(await whoami(old)).toEqual([{ type: 'text', text: 'alpha' }])
    expect(sessions.list().map((s) => `${s.id} ${s.origin}`)).toEqual(['alpha mcp-http'])

    const b = await modern(server.url, 'beta')
    expect(await whoami(b.client)).toEqual([{ type: 'text', text: 'beta' }])
    expect(
      sessions
        .list()
        .map((s) => s.id)
        .sort(),
    ).toEqual(['alpha', 'beta'])
    // The operator hears of each session once, when its first request opens it.
    expect(logs.filter((line) => line.includes('opened by a 2026-07-28 client'))).toEqual([
      'toolvisor-test: session alpha opened by a 2026-07-28 client (2 tools)',
      'toolvisor-test: session beta opened by a 2026-07-28 client (2 tools)',
    ])
  })

  it('refuses a 2026-07-28 request that names no session, and one without the token', async () => {
    const { server, sessions } = await serve()
    // The client cannot negotiate the revision (its discover is refused); what it was told:
    await expect(modern(server.url, undefined)).rejects.toThrow(
      /did not offer pinned protocol version 2026-07-28/,
    )
    const discover = (headers: Record<string, string>) =>
      fetch(server.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2026-07-28',
          ...headers,
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'server/discover',
          params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } },
        }),
      })
    const unnamed = await discover({ authorization: `Bearer ${TOKEN}` })
    expect(unnamed.status).toBe(400)
    expect(((await unnamed.json()) as { error: { code: number; message: string } }).error).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/^x-toolvisor-session: required of a 2026-07-28 client/),
    })
    const response = await discover({ 'x-toolvisor-session': 'alpha' })
    expect(response.status).toBe(401)
    expect(sessions.list()).toEqual([])
  })

  it('tells a listen subscription of a new tool', async () => {
    const { server, tools } = await serve()
    const a = await modern(server.url, 'alpha')
    await a.client.listTools()
    // The subscription opens after the first answers, and the client waits for changes to settle
    // before it lists again: a tool is added, then a second is waited for, until one is told.
    let added = 0
    while (a.changes.length === 0 && added < 10) {
      tools.register(tool(`late${++added}`, async () => text('late')))
      await eventually(() => a.changes.length > 0, 1000)
    }
    const names = Array.from({ length: added }, (_, n) => `late${n + 1}`)
    await waitFor(() => a.changes.at(-1)?.length === 2 + added, 10_000, 'every added tool told')
    expect(a.changes.at(-1)).toEqual(['whoami', 'escalate', ...names])
  })

  it("asks an escalation by an input_required round; another session's client cannot use its state", async () => {
    const { server } = await serve()
    const a = await modern(server.url, 'alpha')
    let asked = 0
    a.client.setRequestHandler('elicitation/create', async () => {
      asked++
      return { action: 'accept', content: {} }
    })
    const allowed = await a.client.callTool({ name: 'escalate', arguments: { command: 'make' } })
    expect(allowed.content).toEqual([{ type: 'text', text: 'approval: allowed-once' }])
    expect(asked).toBe(1)

    const manual = await modern(server.url, 'alpha', { manual: true })
    const params = { name: 'escalate', arguments: { command: 'make' } }
    const round = await roundOne(manual.client, params)
    const thief = await modern(server.url, 'beta', { manual: true })
    const accept = { approval: { action: 'accept', content: {} } }
    await expect(retry(thief.client, params, accept, round.requestState)).rejects.toThrow(
      /the approval state does not match this call: it was issued to another session/,
    )
  })
})
