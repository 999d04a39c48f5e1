import { request as httpRequest } from 'node:http'
import { connect as tcpConnect } from 'node:net'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { createSessions } from '@toolvisor/tasks'
import { createToolRegistry } from '@toolvisor/toolbox'
import { describe, expect, it } from 'vitest'
import { SESSION_HEADER, serveHttp } from '../src/index.js'
import { text, tool, waitFor } from './helpers.js'
import { closedAfter, disconnectedAfter, TOKEN } from './http-helpers.js'

function whoAmI() {
  const tools = createToolRegistry()
  tools.register(tool('whoami', async (_args, ctx) => text(ctx.sessionId ?? '(none)')))
  return tools
}

async function serve(extra: Partial<Parameters<typeof serveHttp>[1]> = {}) {
  const sessions = createSessions()
  const logs: string[] = []
  const server = await serveHttp(whoAmI(), {
    name: 'toolvisor-test',
    version: '1.0.0',
    listen: { host: '127.0.0.1', port: 0 },
    token: TOKEN,
    sessions,
    log: (line) => logs.push(line),
    ...extra,
  })
  closedAfter(server)
  return { server, sessions, logs }
}

async function connect(url: string, headers: Record<string, string> = {}, sessionId?: string) {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { authorization: `Bearer ${TOKEN}`, ...headers } },
    ...(sessionId ? { sessionId } : {}),
  })
  const client = new Client({ name: 'http-test', version: '0' })
  await client.connect(transport)
  disconnectedAfter(client)
  return { client, transport }
}

/** A raw request: its status, headers and body. */
function raw(url: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}) {
  return new Promise<{ status: number; body: string; headers: Record<string, unknown> }>(
    (resolve, reject) => {
      const req = httpRequest(url, { method: init.method ?? 'POST', headers: init.headers ?? {} }, (res) => {
        let body = ''
        res.on('data', (chunk) => (body += chunk))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }))
      })
      req.on('error', reject)
      req.end(init.body)
    },
  )
}

const initialize = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
})
const json = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }

describe('serveHttp', () => {
  it('serves tools over Streamable HTTP to the SDK client, one toolvisor session per client', async () => {
    const { server, sessions } = await serve()
    const a = await connect(server.url)
    const b = await connect(server.url)
    expect((await a.client.listTools()).tools.map((t) => t.name)).toEqual(['whoami'])
    const idA = (await a.client.callTool({ name: 'whoami', arguments: {} })).content
    const idB = (await b.client.callTool({ name: 'whoami', arguments: {} })).content
    expect(idA).not.toEqual(idB)
    expect(sessions.list().map((s) => s.origin)).toEqual(['mcp-http', 'mcp-http'])
  })

  it('a client that goes away and comes back with its session id is the same session', async () => {
    const { server, sessions } = await serve()
    const first = await connect(server.url)
    const before = (await first.client.callTool({ name: 'whoami', arguments: {} })).content
    const mcpSession = first.transport.sessionId!
    // The client process ends without ending the MCP session (no DELETE).
    await first.transport.close()
    const again = await connect(server.url, {}, mcpSession)
    expect((await again.client.callTool({ name: 'whoami', arguments: {} })).content).toEqual(before)
    expect(sessions.list()).toHaveLength(1)
  })

  it('a client that names its session (a bridge) gets that session at every connection, and it outlives them', async () => {
    const { server, sessions } = await serve()
    const one = await connect(server.url, { [SESSION_HEADER]: 'agent-1' })
    expect((await one.client.callTool({ name: 'whoami', arguments: {} })).content).toEqual([
      { type: 'text', text: 'agent-1' },
    ])
    await one.transport.terminateSession()
    await one.client.close()
    const two = await connect(server.url, { [SESSION_HEADER]: 'agent-1' })
    expect((await two.client.callTool({ name: 'whoami', arguments: {} })).content).toEqual([
      { type: 'text', text: 'agent-1' },
    ])
    // Its client as it named itself, and its calls, for the operator page.
    expect(sessions.get('agent-1')).toMatchObject({ opens: 2, origin: 'mcp-http', client: 'http-test 0' })
    expect(sessions.get('agent-1')?.calls?.map((c) => [c.tool, c.error])).toEqual([
      ['whoami', false],
      ['whoami', false],
    ])
    const bad = await raw(server.url, {
      headers: { ...json, authorization: `Bearer ${TOKEN}`, [SESSION_HEADER]: 'a b' },
      body: initialize,
    })
    expect(bad.status).toBe(400)
    expect(JSON.parse(bad.body).error.message).toBe(
      'x-toolvisor-session: not a session name; use 1 to 128 characters of A-Z a-z 0-9 . _ : @ -',
    )
  })

  it('refuses a request without the token, with a wrong one, from a foreign Origin or for another Host, before reading it, and logs each', async () => {
    const { server, sessions, logs } = await serve()
    const none = await raw(server.url, { headers: json, body: initialize })
    expect(none).toMatchObject({ status: 401, body: 'missing Authorization: Bearer <token>\n' })
    expect(none.headers['www-authenticate']).toBe('Bearer realm="toolvisor"')
    const wrong = await raw(server.url, {
      headers: { ...json, authorization: 'Bearer nope' },
      body: initialize,
    })
    expect(wrong).toMatchObject({ status: 401, body: 'wrong bearer token\n' })
    const origin = await raw(server.url, {
      headers: { ...json, authorization: `Bearer ${TOKEN}`, origin: 'http://evil.example' },
      body: initialize,
    })
    expect(origin.status).toBe(403)
    expect(origin.body).toMatch(
      /^origin "http:\/\/evil\.example" is not allowed \(allowed: http:\/\/127\.0\.0\.1:\d+, http:\/\/localhost:\d+\)/,
    )
    const own = new URL(server.url).origin
    const fine = await raw(server.url, {
      headers: { ...json, authorization: `Bearer ${TOKEN}`, origin: own },
      body: initialize,
    })
    expect(fine.status).toBe(200)
    const rebound = await raw(server.url, {
      headers: { ...json, authorization: `Bearer ${TOKEN}`, host: 'evil.example:80' },
      body: initialize,
    })
    expect(rebound).toMatchObject({ status: 403 })
    expect(rebound.body).toMatch(
      /^host "evil\.example:80" is not this server \(allowed: 127\.0\.0\.1:\d+, localhost:\d+\)/,
    )
    const elsewhere = await raw(new URL('/other', server.url).href, { method: 'GET', headers: {} })
    expect(elsewhere.status).toBe(401)
    expect(sessions.list()).toHaveLength(1)
    // Each refusal said once, with where it came from (the GET of /other repeats the first reason
    // from the same address within 10 s: counted, not said); the one session opened, with its client.
    const from = String.raw`from 127\.0\.0\.1:\d+`
    const said = [
      String.raw`refused POST "/mcp" ${from}: missing Authorization: Bearer <token> \(401\)$`,
      String.raw`refused POST "/mcp" ${from}: wrong bearer token \(401\)$`,
      String.raw`refused POST "/mcp" ${from}: origin "http://evil\.example" is not allowed .* \(403\)$`,
      String.raw`MCP session [0-9a-f-]{36} ${from}: "raw" "0" \(protocol "2025-06-18"\), in toolvisor session http-`,
      String.raw`refused POST "/mcp" ${from}: host "evil\.example:80" is not this server .* \(403\)$`,
    ]
    const logged = logs.filter((line) => /: (refused|MCP session) /.test(line))
    expect(logged).toEqual(said.map((line) => expect.stringMatching(new RegExp(`^toolvisor-test: ${line}`))))
  })

  it('answers a malformed body, an unknown session and an oversized body with proper errors, and goes on', async () => {
    const { server } = await serve({ maxBodyBytes: 1000 })
    const auth = { ...json, authorization: `Bearer ${TOKEN}` }
    const garbage = await raw(server.url, { headers: auth, body: '{nope' })
    expect(garbage.status).toBe(400)
    expect(JSON.parse(garbage.body).error.code).toBe(-32700)
    const unknown = await raw(server.url, {
      headers: { ...auth, 'mcp-session-id': 'gone' },
      body: initialize,
    })
    expect(unknown.status).toBe(404)
    expect(JSON.parse(unknown.body).error.message).toBe(
      'Session not found: "gone" (it ended, or the server restarted); initialize again',
    )
    const big = await raw(server.url, { headers: auth, body: JSON.stringify({ pad: 'x'.repeat(5000) }) })
    expect(big.status).toBe(413)
    const client = await connect(server.url)
    expect((await client.client.listTools()).tools).toHaveLength(1)
  })

  it("reads a session's POST bodies with the transport's own answers: 413 by length or as they arrive, 400, 415 and 406 left to it", async () => {
    const { server } = await serve({ maxBodyBytes: 1000 })
    const { client, transport } = await connect(server.url)
    const session = { ...json, authorization: `Bearer ${TOKEN}`, 'mcp-session-id': transport.sessionId! }
    const ping = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'ping' })
    const error = (answer: { body: string }) => JSON.parse(answer.body).error
    const byLength = await raw(server.url, {
      headers: session,
      body: JSON.stringify({ pad: 'x'.repeat(5000) }),
    })
    expect([byLength.status, error(byLength)]).toEqual([
      413,
      { code: -32000, message: 'Payload Too Large: Request body must not exceed 1000 bytes' },
    ])
    const chunked = { ...session, 'transfer-encoding': 'chunked' }
    const arriving = await raw(server.url, { headers: chunked, body: `[${Array(300).fill(ping).join(',')}]` })
    expect(arriving.status).toBe(413)
    const garbage = await raw(server.url, { headers: session, body: '{nope' })
    expect([garbage.status, error(garbage)]).toEqual([
      400,
      { code: -32700, message: 'Parse error: Invalid JSON' },
    ])
    // Refused by the transport before any body is read, as before: the body is never looked at.
    const text = await raw(server.url, {
      headers: { ...session, 'content-type': 'text/plain' },
      body: '{nope',
    })
    expect(text.status).toBe(415)
    const accept = await raw(server.url, { headers: { ...session, accept: 'application/json' }, body: ping })
    expect(accept.status).toBe(406)
    const answered = await raw(server.url, { headers: session, body: ping })
    expect(answered.status).toBe(200)
    expect(answered.body).toContain('"id":7')
    expect((await client.listTools()).tools).toHaveLength(1)
  })

  it('ends a session idle past its TTL that owns nothing running, and keeps one that does', async () => {
    const running = new Set(['keep'])
    const { server, sessions } = await serve({ sessionTtlMs: 200, ownsRunning: (s) => running.has(s) })
    await connect(server.url, { [SESSION_HEADER]: 'keep' })
    await connect(server.url, { [SESSION_HEADER]: 'idle' })
    const deadline = Date.now() + 5000
    while (sessions.get('idle') !== undefined && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50))
    expect(sessions.list().map((s) => s.id)).toEqual(['keep'])
  })

  it('drops a client that never finishes its request, and serves the others meanwhile', async () => {
    const { server } = await serve({ headersTimeoutMs: 500, requestTimeoutMs: 1000 })
    const { hostname, port } = new URL(server.url)
    const slow = tcpConnect(Number(port), hostname)
    await new Promise((resolve) => slow.once('connect', resolve))
    slow.write(
      `POST /mcp HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${TOKEN}\r\ncontent-length: 100\r\n\r\n{"jsonrpc"`,
    )
    const closed = new Promise<number>((resolve) => {
      const began = Date.now()
      slow.once('close', () => resolve(Date.now() - began))
    })
    slow.on('error', () => {})
    slow.resume()
    const client = await connect(server.url)
    expect((await client.client.listTools()).tools).toHaveLength(1)
    expect(await closed).toBeLessThan(5000)
  })

  it('ends an unnamed session when its client ends the MCP session; refuses initializes past maxSessions', async () => {
    const { server, sessions } = await serve({ maxSessions: 2 })
    const one = await connect(server.url)
    await one.client.callTool({ name: 'whoami', arguments: {} })
    expect(sessions.list()).toHaveLength(1)
    await one.transport.terminateSession()
    await waitFor(() => sessions.list().length === 0, 5000, 'the session to end')
    await connect(server.url)
    await connect(server.url)
    const third = await raw(server.url, {
      headers: { ...json, authorization: `Bearer ${TOKEN}` },
      body: initialize,
    })
    expect(third.status).toBe(503)
    expect(JSON.parse(third.body).error.message).toBe(
      'too many MCP sessions (2); end one (DELETE) or wait for an idle one to expire',
    )
  })
})
