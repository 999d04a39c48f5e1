import { Agent, request } from 'node:http'

/** One raw HTTP request through `agent`: its status and body. */
function send(
  url: string,
  agent: Agent,
  init: { method?: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, method: init.method ?? 'POST', headers: init.headers ?? {} }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk) => (body += chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }))
    })
    req.on('error', reject)
    req.end(init.body)
  })
}

const accept = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
const rpc = (id: number, method: string, params: object) =>
  JSON.stringify({ jsonrpc: '2.0', id, method, params })
const init = rpc(1, 'initialize', {
  protocolVersion: '2025-06-18',
  capabilities: {},
  clientInfo: { name: 'flood', version: '0' },
})

/**
 * `count` requests over at most `connections` sockets, a mix of what a hostile or broken client
 * sends (no token, a wrong one, a foreign Origin, a body that is not JSON, a stale session) and whole
 * sessions (initialize, a call, DELETE). Returns the statuses seen, by kind.
 */
export async function flood(url: string, token: string, count: number, connections: number) {
  const agent = new Agent({ keepAlive: true, maxSockets: connections })
  const auth = { ...accept, authorization: `Bearer ${token}` }
  const seen: Record<string, number[]> = {}
  const note = (kind: string, status: number) => {
    seen[kind] = [...(seen[kind] ?? []), status]
  }
  const kinds = [
    async () => note('no token', (await send(url, agent, { headers: accept, body: init })).status),
    async () =>
      note(
        'wrong token',
        (await send(url, agent, { headers: { ...accept, authorization: 'Bearer x' }, body: init })).status,
      ),
    async () =>
      note(
        'bad origin',
        (await send(url, agent, { headers: { ...auth, origin: 'http://evil.example' }, body: init })).status,
      ),
    async () => note('not json', (await send(url, agent, { headers: auth, body: '{"jsonrpc":' })).status),
    async () =>
      note(
        'stale session',
        (await send(url, agent, { headers: { ...auth, 'mcp-session-id': 'gone' }, body: init })).status,
      ),
    async () => {
      const opened = await send(url, agent, { headers: auth, body: init })
      const id = opened.headers['mcp-session-id'] as string
      const session = { ...auth, 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' }
      const call = await send(url, agent, {
        headers: session,
        body: rpc(2, 'tools/call', { name: 'word_count', arguments: { text: 'a b' } }),
      })
      const ended = await send(url, agent, { method: 'DELETE', headers: session })
      note('session', opened.status)
      note('session', call.status)
      note('session', ended.status)
    },
  ]
  let next = 0
  const worker = async () => {
    while (next < count) {
      const kind = kinds[next++ % kinds.length]!
      await kind()
    }
  }
  await Promise.all(Array.from({ length: connections }, worker))
  agent.destroy()
  return seen
}
