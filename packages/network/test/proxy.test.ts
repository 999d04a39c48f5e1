/**
 * The proxy with real clients over real sockets: curl (plain HTTP, CONNECT, SOCKS5 with names
 * resolved by the proxy), Node's http client, raw sockets for what clients never send. Names are
 * resolved through the `resolve` test seam: `allowed.test` and its kind lead to 127.0.0.1, where
 * the test's servers listen.
 */

import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { Agent, type IncomingHttpHeaders } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import {
  createProxy,
  type Denial,
  denialMarker,
  type Gate,
  type GateRequest,
  type NetProxy,
  NetworkError,
  type ProxyOptions,
} from '../src/index.js'
import {
  closedPort,
  dialTo,
  echoServer,
  httpServer,
  openSockets,
  readAll,
  readBytes,
  run,
  type Started,
  waitFor,
} from './helpers.js'
import { connectVia, socksVia, viaProxy } from './proxy-clients.js'

const NAMES: Record<string, readonly string[]> = {
  'allowed.test': ['127.0.0.1'],
  'other.test': ['127.0.0.1'],
  'secret.x.test': ['127.0.0.1'],
  'a.x.test': ['127.0.0.1'],
  'deep.a.x.test': ['127.0.0.1'],
  'x.test': ['127.0.0.1'],
  'metadata.x.test': ['169.254.169.254'],
  'mapped.x.test': ['::ffff:127.0.0.1'],
  'unlisted.test': ['127.0.0.1'],
  'asked.test': ['127.0.0.1'],
}

/** The test seam: names from the map above, and nothing else resolves. */
async function resolve(host: string): Promise<readonly string[]> {
  const found = NAMES[host]
  if (found === undefined)
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' })
  return found
}

const baseline = openSockets()
const proxies: NetProxy[] = []
const servers: Started[] = []
const place = mkdtempSync(join(tmpdir(), 'tv-proxy-'))

afterEach(async () => {
  await Promise.all(proxies.splice(0).map((proxy) => proxy.close()))
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

afterAll(async () => {
  rmSync(place, { recursive: true, force: true })
  await waitFor(() => openSockets() <= baseline, 'every socket and listener to be gone')
})

function proxyOf(options: ProxyOptions = {}): NetProxy {
  const proxy = createProxy({ resolve, ...options })
  proxies.push(proxy)
  return proxy
}

async function gateOf(
  allow: readonly string[],
  deny: readonly string[] = [],
  extra: Partial<GateRequest> & { readonly options?: ProxyOptions } = {},
): Promise<{ gate: Gate; port: number; denials: Denial[] }> {
  const { options, ...request } = extra
  const gate = await proxyOf(options).open({
    id: 'test',
    rules: { allow, deny },
    listen: { tcp: true },
    ...request,
  })
  const denials: Denial[] = []
  gate.onDenied((denial) => denials.push(denial))
  return { gate, port: gate.tcpPort!, denials }
}

/** An HTTP server in another process: prints its port, answers 200. */
const PY_SERVER = `
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.send_header("Content-Length", "2"); self.end_headers(); self.wfile.write(b"ok")
    def log_message(self, *a): pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
`

let web: Started & { readonly seen: { path: string; headers: IncomingHttpHeaders }[] }

beforeAll(async () => {
  const seen: { path: string; headers: IncomingHttpHeaders }[] = []
  const started = await httpServer((req, res) => {
    seen.push({ path: req.url ?? '', headers: req.headers })
    const body = `hello ${req.headers.host} ${req.url}`
    res.writeHead(200, {
      'Content-Type': 'text/plain',
      'Content-Length': Buffer.byteLength(body),
      'X-Hop': 'x',
    })
    res.end(body)
  })
  web = { ...started, seen }
})
afterAll(() => web.close())

const curl = (args: readonly string[]) => run('curl', ['-sS', '--max-time', '15', ...args])

describe('an allowed name', () => {
  it('is reached by curl as plain HTTP, by absolute URL', async () => {
    const { gate, port } = await gateOf(['allowed.test'])
    const got = await curl(['-x', `http://127.0.0.1:${port}`, `http://allowed.test:${web.port}/plain?q=1`])
    expect(got.stderr).toBe('')
    expect(got.stdout).toBe(`hello allowed.test:${web.port} /plain?q=1`)
    const report = gate.report()
    expect(report.connections).toBe(1)
    expect(report.byName[`allowed.test:${web.port}`]?.connections).toBe(1)
    expect(report.deniedCount).toBe(0)
  })

  it('is reached by curl through a CONNECT tunnel', async () => {
    const { port } = await gateOf(['allowed.test'])
    const got = await curl(['-p', '-x', `http://127.0.0.1:${port}`, `http://allowed.test:${web.port}/tunnel`])
    expect(got.stdout).toBe(`hello allowed.test:${web.port} /tunnel`)
  })

  it('is reached by curl over SOCKS5 with the name resolved by the proxy (socks5h)', async () => {
    const { gate, port } = await gateOf(['allowed.test'])
    const got = await curl([
      '--proxy',
      `socks5h://127.0.0.1:${port}`,
      `http://allowed.test:${web.port}/socks`,
    ])
    expect(got.stdout).toBe(`hello allowed.test:${web.port} /socks`)
    expect(gate.report().byName[`allowed.test:${web.port}`]?.connections).toBe(1)
  })

  it('carries a TCP stream both ways through a CONNECT tunnel from Node, and its end', async () => {
    const echo = await echoServer()
    servers.push(echo)
    const { port } = await gateOf([`allowed.test:${echo.port}`])
    const tunnel = await connectVia(port, `allowed.test:${echo.port}`)
    expect(tunnel.status).toBe(200)
    tunnel.socket.write('ping through the tunnel')
    expect((await readBytes(tunnel.socket, 23)).toString()).toBe('ping through the tunnel')
    tunnel.socket.end('and the last words')
    expect((await readAll(tunnel.socket)).toString()).toBe('and the last words')
  })

  it('is forwarded in origin form, with Host from the URL and the hop-by-hop headers removed', async () => {
    const { port } = await gateOf(['allowed.test'])
    web.seen.length = 0
    const got = await viaProxy(port, `http://allowed.test:${web.port}/path?x=1`, {
      headers: {
        Host: 'evil.test',
        'Proxy-Connection': 'keep-alive',
        'Proxy-Authorization': 'Basic c2VjcmV0',
        Connection: 'keep-alive, X-Hop-Only',
        'X-Hop-Only': 'drop me',
        'X-End-To-End': 'keep me',
      },
    })
    expect(got.status).toBe(200)
    expect(got.body).toBe(`hello allowed.test:${web.port} /path?x=1`)
    const seen = web.seen[0]!
    expect(seen.path).toBe('/path?x=1')
    expect(seen.headers.host).toBe(`allowed.test:${web.port}`)
    expect(seen.headers['x-end-to-end']).toBe('keep me')
    expect(seen.headers['proxy-connection']).toBeUndefined()
    expect(seen.headers['proxy-authorization']).toBeUndefined()
    expect(seen.headers['x-hop-only']).toBeUndefined()
  })

  it('keeps a client connection alive across requests, deciding each one anew', async () => {
    const { gate, port } = await gateOf(['allowed.test'])
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    try {
      const first = await viaProxy(port, `http://allowed.test:${web.port}/1`, { agent })
      const second = await viaProxy(port, `http://unlisted.test:${web.port}/2`, { agent })
      const third = await viaProxy(port, `http://allowed.test:${web.port}/3`, { agent })
      expect([first.status, second.status, third.status]).toEqual([200, 403, 200])
      expect([second.reused, third.reused]).toEqual([true, true])
      expect(second.body).toBe(`toolvisor: blocked unlisted.test:${web.port}, not in the allow list\n`)
      expect(gate.report().connections).toBe(2)
    } finally {
      agent.destroy()
    }
  })

  it('matches names without regard to case or a trailing dot', async () => {
    const { port } = await gateOf(['Allowed.Test.'])
    const got = await viaProxy(port, `http://ALLOWED.test.:${web.port}/case`)
    expect(got.status).toBe(200)
  })

  it('reaches an IP literal only through an allow entry naming that literal', async () => {
    const { port } = await gateOf([`127.0.0.1:${web.port}`])
    const got = await curl(['-x', `http://127.0.0.1:${port}`, `http://127.0.0.1:${web.port}/ip`])
    expect(got.stdout).toBe(`hello 127.0.0.1:${web.port} /ip`)
    const socks = await socksVia(port, { ipv4: '127.0.0.1' }, web.port)
    expect(socks.reply).toBe(0)
    socks.socket.destroy()
  })

  it('answers on a unix socket of mode 0600, which is gone after close', async () => {
    const path = join(place, 'gate.sock')
    const gate = await proxyOf().open({
      id: 'unix',
      rules: { allow: ['allowed.test'], deny: [] },
      listen: { unix: path },
    })
    expect(gate.unixPath).toBe(path)
    expect(gate.tcpPort).toBeUndefined()
    expect(statSync(path).mode & 0o777).toBe(0o600)
    const socket = await dialTo(path)
    socket.end(
      `GET http://allowed.test:${web.port}/unix HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n`,
    )
    const answer = (await readAll(socket)).toString()
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n/)
    expect(answer.endsWith(`hello allowed.test:${web.port} /unix`)).toBe(true)
    await gate.close()
    expect(existsSync(path)).toBe(false)
    await gate.close()
  })
})

describe('a refusal', () => {
  it('answers plain HTTP with 403, the reason in a header and one line of text, and is reported', async () => {
    const { gate, port, denials } = await gateOf(['allowed.test'])
    const got = await curl(['-i', '-x', `http://127.0.0.1:${port}`, `http://unlisted.test:${web.port}/`])
    expect(got.stdout).toMatch(/^HTTP\/1\.1 403 Forbidden\r\n/)
    expect(got.stdout).toMatch(/\r\nX-Toolvisor-Denied: not in the allow list\r\n/i)
    expect(got.stdout).toMatch(/\r\nContent-Type: text\/plain; charset=utf-8\r\n/i)
    expect(
      got.stdout.endsWith(`\r\n\r\ntoolvisor: blocked unlisted.test:${web.port}, not in the allow list\n`),
    ).toBe(true)
    const report = gate.report()
    expect(report.deniedCount).toBe(1)
    expect(report.denied[0]).toMatchObject({
      host: 'unlisted.test',
      port: web.port,
      reason: 'not in the allow list',
    })
    expect(report.connections).toBe(0)
    expect(denials).toEqual(report.denied)
    expect(denialMarker(denials[0]!)).toBe(
      `[network: blocked unlisted.test:${web.port}, not in the allow list]`,
    )
  })

  it('answers CONNECT with 403 (curl fails the tunnel) and SOCKS5 with "not allowed by ruleset"', async () => {
    const { gate, port } = await gateOf(['allowed.test'])
    const tunnel = await curl(['-p', '-x', `http://127.0.0.1:${port}`, `http://unlisted.test:${web.port}/`])
    expect(tunnel.code).toBe(56)
    expect(tunnel.stderr).toMatch(/CONNECT tunnel failed, response 403/)
    const connect = await connectVia(port, `unlisted.test:${web.port}`)
    expect(connect.status).toBe(403)
    expect(connect.headers['x-toolvisor-denied']).toBe('not in the allow list')
    expect(connect.body).toBe(`toolvisor: blocked unlisted.test:${web.port}, not in the allow list\n`)
    const socks = await curl(['--proxy', `socks5h://127.0.0.1:${port}`, `http://unlisted.test:${web.port}/`])
    expect(socks.code).toBe(97)
    const raw = await socksVia(port, { domain: 'unlisted.test' }, web.port)
    expect(raw.reply).toBe(0x02)
    raw.socket.destroy()
    expect(gate.report().deniedCount).toBe(4)
  })

  it('refuses a raw IP that no entry names, whatever names are allowed', async () => {
    const { port, denials } = await gateOf(['allowed.test', '*.x.test'])
    const got = await curl(['-x', `http://127.0.0.1:${port}`, `http://127.0.0.1:${web.port}/`])
    expect(got.stdout).toBe(`toolvisor: blocked 127.0.0.1:${web.port}, not in the allow list\n`)
    const socks = await socksVia(port, { ipv4: '127.0.0.1' }, web.port)
    expect(socks.reply).toBe(0x02)
    socks.socket.destroy()
    // Spellings of 127.0.0.1 that the C library would read as that address are that address.
    const odd = await viaProxy(port, `http://2130706433:${web.port}/`)
    expect(odd.status).toBe(403)
    expect(denials.map((denial) => denial.host)).toEqual(['127.0.0.1', '127.0.0.1', '127.0.0.1'])
  })

  it('refuses the metadata address, as a literal and behind a wildcard name', async () => {
    const { denials, port } = await gateOf(['*.x.test'])
    const literal = await viaProxy(port, 'http://169.254.169.254/latest/meta-data/')
    expect(literal.status).toBe(403)
    const named = await viaProxy(port, 'http://metadata.x.test/latest/meta-data/')
    expect(named.status).toBe(403)
    expect(named.headers['x-toolvisor-denied']).toBe('a local or reserved address (169.254.169.254)')
    expect(denials.map((denial) => `${denial.host} ${denial.reason}`)).toEqual([
      '169.254.169.254 not in the allow list',
      'metadata.x.test a local or reserved address (169.254.169.254)',
    ])
  })

  it('refuses a wildcard-allowed name that resolves to a local address, mapped IPv6 included', async () => {
    const { port, denials } = await gateOf(['*.x.test'])
    const local = await curl(['-x', `http://127.0.0.1:${port}`, `http://a.x.test:${web.port}/`])
    expect(local.stdout).toBe(
      `toolvisor: blocked a.x.test:${web.port}, a local or reserved address (127.0.0.1)\n`,
    )
    const mapped = await viaProxy(port, `http://mapped.x.test:${web.port}/`)
    expect(mapped.headers['x-toolvisor-denied']).toBe('a local or reserved address (::ffff:7f00:1)')
    // The apex is not under the wildcard.
    const apex = await viaProxy(port, `http://x.test:${web.port}/`)
    expect(apex.headers['x-toolvisor-denied']).toBe('not in the allow list')
    expect(denials).toHaveLength(3)
  })

  it('lets an exact entry reach its local address, and a wildcard reach names at any depth', async () => {
    const { port } = await gateOf(['a.x.test', 'deep.a.x.test'])
    expect((await viaProxy(port, `http://a.x.test:${web.port}/`)).status).toBe(200)
    const wild = await gateOf(['*.x.test'], [], { options: { resolve: async () => ['127.0.0.1'] } })
    // Resolved to 127.0.0.1 through the wildcard: refused at any depth, which proves the match.
    const deep = await viaProxy(wild.port, `http://deep.a.x.test:${web.port}/`)
    expect(deep.headers['x-toolvisor-denied']).toBe('a local or reserved address (127.0.0.1)')
  })

  it("refuses this process's own listener under refuseOwnListeners, whatever the list names", async () => {
    // web listens in this process, as toolvisor's serve endpoint does in toolvisor's.
    const own = await gateOf(['allowed.test'], [], { options: { refuseOwnListeners: true } })
    const refused = await viaProxy(own.port, `http://allowed.test:${web.port}/`)
    expect(refused.status).toBe(403)
    expect(refused.headers['x-toolvisor-denied']).toBe("toolvisor's own listener")
    expect(own.denials.map((d) => d.reason)).toEqual(["toolvisor's own listener"])
    // A server of another process on the same host is reached.
    const other = spawn('python3', ['-c', PY_SERVER], { stdio: ['ignore', 'pipe', 'inherit'] })
    try {
      const port = await new Promise<number>((resolve) =>
        other.stdout.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim()))),
      )
      expect((await viaProxy(own.port, `http://allowed.test:${port}/`)).status).toBe(200)
    } finally {
      other.kill('SIGKILL')
      await new Promise((resolve) => other.once('close', resolve))
    }
  })

  it('lets the deny list win over the allow list, for names and for resolved addresses', async () => {
    const names = await gateOf(['*.x.test', 'secret.x.test'], ['secret.x.test'])
    const name = await viaProxy(names.port, `http://secret.x.test:${web.port}/`)
    expect(name.status).toBe(403)
    expect(name.headers['x-toolvisor-denied']).toBe('in the deny list')
    const wild = await gateOf(['allowed.test'], ['*.test'])
    expect(
      (await viaProxy(wild.port, `http://allowed.test:${web.port}/`)).headers['x-toolvisor-denied'],
    ).toBe('in the deny list')
    const addresses = await gateOf(['allowed.test'], ['127.0.0.1'])
    const address = await viaProxy(addresses.port, `http://allowed.test:${web.port}/`)
    expect(address.headers['x-toolvisor-denied']).toBe('in the deny list')
    const mapped = await gateOf(['allowed.test'], ['::ffff:127.0.0.1'])
    expect(
      (await viaProxy(mapped.port, `http://allowed.test:${web.port}/`)).headers['x-toolvisor-denied'],
    ).toBe('in the deny list')
  })

  it('holds an entry to its port', async () => {
    const other = await closedPort()
    const { port } = await gateOf([`allowed.test:${web.port}`])
    expect((await viaProxy(port, `http://allowed.test:${web.port}/`)).status).toBe(200)
    const wrong = await viaProxy(port, `http://allowed.test:${other}/`)
    expect(wrong.headers['x-toolvisor-denied']).toBe('not in the allow list')
  })

  it('tells a name that does not resolve and a target that refuses apart, in HTTP and SOCKS5', async () => {
    const dead = await closedPort()
    const { port, denials } = await gateOf(['nowhere.test', 'allowed.test'])
    const unresolved = await viaProxy(port, 'http://nowhere.test/')
    expect(unresolved.status).toBe(502)
    expect(unresolved.headers['x-toolvisor-denied']).toBe('the name does not resolve')
    const refused = await viaProxy(port, `http://allowed.test:${dead}/`)
    expect(refused.status).toBe(502)
    expect(refused.body).toBe(`toolvisor: blocked allowed.test:${dead}, connection refused by the target\n`)
    const socksUnresolved = await socksVia(port, { domain: 'nowhere.test' }, 80)
    expect(socksUnresolved.reply).toBe(0x04)
    const socksRefused = await socksVia(port, { domain: 'allowed.test' }, dead)
    expect(socksRefused.reply).toBe(0x05)
    for (const socks of [socksUnresolved, socksRefused]) socks.socket.destroy()
    expect(denials.map((denial) => denial.reason)).toEqual([
      'the name does not resolve',
      'connection refused by the target',
      'the name does not resolve',
      'connection refused by the target',
    ])
  })

  it('answers a request that is not in absolute form with 400 and a text reason', async () => {
    const { port } = await gateOf(['allowed.test'])
    const socket = await dialTo(port)
    socket.end('GET /local HTTP/1.1\r\nHost: allowed.test\r\n\r\n')
    const answer = (await readAll(socket)).toString()
    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/)
    expect(answer).toMatch(
      /toolvisor: this is a proxy; ask for an absolute URL \(GET http:\/\/host\/path\) or CONNECT host:port\n$/,
    )
  })
})

describe('asking the operator', () => {
  function asker(answer: 'once' | 'session' | 'deny' | 'throw') {
    const asked: string[] = []
    const ask = async (host: string, port: number) => {
      asked.push(`${host}:${port}`)
      if (answer === 'throw') throw new Error('the elicitation failed')
      return answer
    }
    return { asked, ask }
  }

  it('once: lets this connection through, and asks again for the next', async () => {
    const { asked, ask } = asker('once')
    const { gate, port } = await gateOf([], [], { ask })
    expect((await viaProxy(port, `http://asked.test:${web.port}/`)).status).toBe(200)
    expect((await curl(['-x', `http://127.0.0.1:${port}`, `http://asked.test:${web.port}/`])).stdout).toMatch(
      /^hello/,
    )
    expect(asked).toEqual([`asked.test:${web.port}`, `asked.test:${web.port}`])
    expect(gate.report().connections).toBe(2)
  })

  it('session: adds the host and port to the gate, asked no more', async () => {
    const { asked, ask } = asker('session')
    const { port } = await gateOf([], [], { ask })
    expect((await viaProxy(port, `http://asked.test:${web.port}/`)).status).toBe(200)
    expect((await viaProxy(port, `http://asked.test:${web.port}/again`)).status).toBe(200)
    const socks = await socksVia(port, { domain: 'asked.test' }, web.port)
    expect(socks.reply).toBe(0)
    socks.socket.destroy()
    expect(asked).toEqual([`asked.test:${web.port}`])
  })

  it('deny, or an ask that fails: refused by the operator', async () => {
    for (const answer of ['deny', 'throw'] as const) {
      const { asked, ask } = asker(answer)
      const { port, denials } = await gateOf([], [], { ask })
      const got = await viaProxy(port, `http://asked.test:${web.port}/`)
      expect(got.status).toBe(403)
      expect(got.body).toBe(`toolvisor: blocked asked.test:${web.port}, refused by the operator\n`)
      expect(asked).toHaveLength(1)
      expect(denials[0]?.reason).toBe('refused by the operator')
    }
  })

  it('is not asked for what the deny list names', async () => {
    const { asked, ask } = asker('once')
    const { port } = await gateOf([], ['asked.test'], { ask })
    expect((await viaProxy(port, `http://asked.test:${web.port}/`)).headers['x-toolvisor-denied']).toBe(
      'in the deny list',
    )
    expect(asked).toEqual([])
  })
})

describe('closing', () => {
  it('ends the tunnels, stops listening, and is idempotent', async () => {
    const echo = await echoServer()
    servers.push(echo)
    const { gate, port } = await gateOf([`allowed.test:${echo.port}`])
    const tunnel = await connectVia(port, `allowed.test:${echo.port}`)
    const ended = readAll(tunnel.socket)
    await gate.close()
    await ended
    await expect(dialTo(port)).rejects.toMatchObject({ code: 'ECONNREFUSED' })
    await gate.close()
  })

  it('closes every gate with the proxy, and refuses to open more', async () => {
    const proxy = proxyOf()
    const one = await proxy.open({ id: 'one', rules: { allow: [], deny: [] }, listen: { tcp: true } })
    const two = await proxy.open({ id: 'two', rules: { allow: [], deny: [] }, listen: { tcp: true } })
    const before = openSockets()
    await proxy.close()
    await waitFor(() => openSockets() <= before - 2, 'both listeners to be gone')
    for (const gate of [one, two])
      await expect(dialTo(gate.tcpPort!)).rejects.toMatchObject({ code: 'ECONNREFUSED' })
    const error = await proxy
      .open({ id: 'late', rules: { allow: [], deny: [] }, listen: { tcp: true } })
      .catch((e) => e)
    expect(NetworkError.is(error)).toBe(true)
    expect(error.code).toBe('NET_ERR_CLOSED')
  })
})

describe('errors', () => {
  it('NET_ERR_OPTIONS: a bound that is not a positive integer, a listen that is neither', async () => {
    expect(() => createProxy({ maxConnections: 0 })).toThrow(
      /options\.maxConnections is 0; pass a positive integer/,
    )
    const error = await proxyOf()
      .open({ id: 'x', rules: { allow: [], deny: [] }, listen: {} as GateRequest['listen'] })
      .catch((e) => e)
    expect(error).toMatchObject({ code: 'NET_ERR_OPTIONS' })
    expect(error.message).toMatch(
      /^gate x: listen is \{\}; pass \{ unix: "\/path\/to\/socket" \} or \{ tcp: true \}$/,
    )
  })

  it('NET_ERR_RULES: every bad entry, by its place', async () => {
    const error = await proxyOf()
      .open({
        id: 'launch-7',
        rules: { allow: ['ok.test', '*'], deny: ['https://x.test'] },
        listen: { tcp: true },
      })
      .catch((e) => e)
    expect(error).toMatchObject({ code: 'NET_ERR_RULES' })
    expect(error.message).toBe(
      'gate launch-7: entries are not valid: allow[1]: "*" would allow every host; list the names, or "*.example.com" for the names under a domain; deny[0]: "https://x.test" names a scheme; give the host alone ("x.test")',
    )
  })

  it('NET_ERR_LISTEN: a socket path that cannot be bound', async () => {
    const error = await proxyOf()
      .open({
        id: 'l',
        rules: { allow: [], deny: [] },
        listen: { unix: join(place, 'missing', 'gate.sock') },
      })
      .catch((e) => e)
    expect(error).toMatchObject({ code: 'NET_ERR_LISTEN' })
    expect(error.message).toMatch(
      /^gate l: cannot listen on .*missing\/gate\.sock: .*; remove a stale socket/,
    )
  })
})
