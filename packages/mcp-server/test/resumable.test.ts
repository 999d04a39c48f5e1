// SSE resumability over Streamable HTTP (SEP-1699, decision 0071): a POST stream opens with a
// priming event (an id, a retry hint, no data); a client whose stream broke mid-call comes back
// with Last-Event-ID and gets the answer it missed. And tools/list carries a tool's JSON Schema
// 2020-12 keywords untouched (SEP-1613).
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { createSessions } from '@toolvisor/tasks'
import { createToolRegistry } from '@toolvisor/toolbox'
import { describe, expect, it } from 'vitest'
import { serveHttp } from '../src/index.js'
import { deferred, text, tool } from './helpers.js'
import { closedAfter, disconnectedAfter, TOKEN } from './http-helpers.js'

const SCHEMA_2020_12 = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  $defs: { address: { type: 'object', properties: { street: { type: 'string' } } } },
  properties: { home: { $ref: '#/$defs/address' } },
  additionalProperties: false,
} as const

async function setUp() {
  const tools = createToolRegistry()
  const release = deferred<void>()
  tools.register(
    tool('slow', async () => {
      await release.promise
      return text('done')
    }),
  )
  tools.register({ ...tool('shaped', async () => text('ok')), inputSchema: SCHEMA_2020_12 })
  const server = await serveHttp(tools, {
    name: 'toolvisor-test',
    version: '1.0.0',
    listen: { host: '127.0.0.1', port: 0 },
    token: TOKEN,
    sessions: createSessions(),
    log: () => {},
  })
  closedAfter(server)
  const transport = new StreamableHTTPClientTransport(new URL(server.url), {
    requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
  })
  const client = new Client({ name: 'resume-test', version: '0' })
  await client.connect(transport)
  disconnectedAfter(client)
  return { url: server.url, session: transport.sessionId!, client, release }
}

/** Reads SSE events from `response` until `stop` says so; each as its fields. */
async function events(response: Response, stop: (event: Record<string, string>) => boolean) {
  const seen: Array<Record<string, string>> = []
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
  let buffer = ''
  for (;;) {
    const { value, done } = await reader.read()
    if (done) return seen
    buffer += value
    for (let cut = buffer.indexOf('\n\n'); cut >= 0; cut = buffer.indexOf('\n\n')) {
      const fields = Object.fromEntries(
        buffer
          .slice(0, cut)
          .split('\n')
          .map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()]),
      )
      buffer = buffer.slice(cut + 2)
      seen.push(fields)
      if (stop(fields)) {
        await reader.cancel()
        return seen
      }
    }
  }
}

describe('Streamable HTTP resumability', () => {
  it('a call whose stream broke is answered on the GET that resumes it with Last-Event-ID, at the version the session negotiated', async () => {
    const { url, session, release } = await setUp()
    const headers = {
      authorization: `Bearer ${TOKEN}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': session,
      // Older than the session negotiated (conformance 0.1.16 sends this): served at the session's.
      'mcp-protocol-version': '2025-03-26',
    }
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'slow', arguments: {} },
    })
    const post = await fetch(url, { method: 'POST', headers, body })
    expect(post.headers.get('content-type')).toContain('text/event-stream')
    const [priming] = await events(post, () => true) // the connection drops after the first event
    expect(priming).toEqual({ id: expect.stringMatching(/_\d+$/), retry: '1000', data: '' })

    release.resolve()
    const get = await fetch(url, {
      method: 'GET',
      headers: { ...headers, accept: 'text/event-stream', 'last-event-id': priming!.id! },
    })
    expect(get.status).toBe(200)
    const resumed = await events(get, (event) => event.data?.includes('"id":7') === true)
    const answer = JSON.parse(resumed.at(-1)!.data!)
    expect(answer).toMatchObject({ id: 7, result: { content: [{ type: 'text', text: 'done' }] } })
  })

  it('lists a JSON Schema 2020-12 input schema untouched ($schema, $defs, additionalProperties)', async () => {
    const { client } = await setUp()
    const { tools } = await client.listTools()
    expect(tools.find((t) => t.name === 'shaped')?.inputSchema).toEqual(SCHEMA_2020_12)
  })
})
