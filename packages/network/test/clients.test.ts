/**
 * Real clients configured the way a sandboxed program is (proxy variables, git's http.proxy):
 * Python's urllib over plain HTTP and over HTTPS through CONNECT to a TLS server with its own
 * certificate, curl over HTTPS, and `git clone` from a local `git http-backend` served through a
 * small CGI wrapper.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer as createHttpsServer } from 'node:https'
import type { Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createProxy, type Gate, type NetProxy } from '../src/index.js'
import {
  cleanEnv,
  gitHttpBackend,
  hasGitBackend as hasBackend,
  httpServer,
  openSockets,
  run,
  type Started,
  waitFor,
} from './helpers.js'

const resolve = async (host: string) => {
  if (host.endsWith('.test')) return ['127.0.0.1']
  throw new Error(`getaddrinfo ENOTFOUND ${host}`)
}

const baseline = openSockets()
const place = mkdtempSync(join(tmpdir(), 'tv-proxy-clients-'))
let proxy: NetProxy
let gate: Gate
let proxyUrl: string
let web: Started
let tls: Started
const cert = join(place, 'cert.pem')

beforeAll(async () => {
  const made = spawnSync('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    join(place, 'key.pem'),
    '-out',
    cert,
    '-days',
    '1',
    '-subj',
    '/CN=allowed.test',
    '-addext',
    'subjectAltName=DNS:allowed.test',
  ])
  expect(made.status, made.stderr?.toString()).toBe(0)
  web = await httpServer((req, res) => res.end(`plain ${req.url}`))
  const server = createHttpsServer(
    { key: readFileSync(join(place, 'key.pem')), cert: readFileSync(cert) },
    (req, res) => res.end(`secure ${req.url}`),
  )
  const sockets = new Set<Socket>()
  server.on('connection', (socket: Socket) => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
  })
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
  const address = server.address()
  tls = {
    port: typeof address === 'object' && address !== null ? address.port : 0,
    close: () =>
      new Promise((done) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => done())
      }),
  }
  proxy = createProxy({ resolve })
  gate = await proxy.open({
    id: 'clients',
    rules: { allow: ['allowed.test', 'git.test'], deny: [] },
    listen: { tcp: true },
  })
  proxyUrl = `http://127.0.0.1:${gate.tcpPort}`
})

afterAll(async () => {
  await proxy.close()
  await Promise.all([web.close(), tls.close()])
  rmSync(place, { recursive: true, force: true })
  await waitFor(() => openSockets() <= baseline, 'every socket and listener to be gone')
})

const PYTHON_GET = `
import ssl, sys, urllib.error, urllib.request
context = ssl.create_default_context(cafile=sys.argv[2]) if len(sys.argv) > 2 else None
try:
    with urllib.request.urlopen(sys.argv[1], context=context, timeout=15) as answer:
        print(answer.status, answer.read().decode())
except urllib.error.HTTPError as error:
    print(error.code, error.headers["X-Toolvisor-Denied"], error.read().decode(), end="")
except OSError as error:
    print("failed", error)
`

describe('Python urllib', () => {
  it('goes through HTTP_PROXY for http:// and is refused with the reason', async () => {
    const env = cleanEnv({ HTTP_PROXY: proxyUrl })
    const ok = await run('python3', ['-c', PYTHON_GET, `http://allowed.test:${web.port}/py`], env)
    expect(ok.stdout).toBe('200 plain /py\n')
    const refused = await run('python3', ['-c', PYTHON_GET, `http://unlisted.test:${web.port}/py`], env)
    expect(refused.stdout).toBe(
      `403 not in the allow list toolvisor: blocked unlisted.test:${web.port}, not in the allow list\n`,
    )
  })

  it('goes through HTTPS_PROXY (CONNECT) for https://, end to end encrypted, and is refused', async () => {
    const env = cleanEnv({ HTTPS_PROXY: proxyUrl })
    const ok = await run('python3', ['-c', PYTHON_GET, `https://allowed.test:${tls.port}/secure`, cert], env)
    expect(ok.stdout).toBe('200 secure /secure\n')
    const refused = await run('python3', ['-c', PYTHON_GET, `https://unlisted.test:${tls.port}/`, cert], env)
    expect(refused.stdout).toMatch(/^failed .*Tunnel connection failed: 403 Forbidden/)
  })
})

describe('curl over HTTPS', () => {
  it('tunnels TLS through CONNECT and over SOCKS5', async () => {
    for (const via of [proxyUrl, `socks5h://127.0.0.1:${gate.tcpPort}`]) {
      const got = await run('curl', [
        '-sS',
        '--cacert',
        cert,
        '-x',
        via,
        `https://allowed.test:${tls.port}/curl`,
      ])
      expect(got.stdout).toBe('secure /curl')
    }
  })
})

describe.skipIf(!hasBackend)('git', () => {
  it('clones over HTTP from a local git http-backend through http.proxy, and is refused a name', async () => {
    const git = (args: string[]) =>
      run(
        'git',
        ['-c', 'user.name=t', '-c', 'user.email=t@example.test', ...args],
        cleanEnv({ GIT_TERMINAL_PROMPT: '0' }),
      )
    expect((await git(['init', '-q', join(place, 'work')])).code).toBe(0)
    expect(
      (
        await git([
          '-C',
          join(place, 'work'),
          'commit',
          '-q',
          '--allow-empty',
          '-m',
          'first through the proxy',
        ])
      ).code,
    ).toBe(0)
    expect((await git(['clone', '-q', '--bare', join(place, 'work'), join(place, 'repo.git')])).code).toBe(0)
    const { server, children } = await gitHttpBackend(place)
    try {
      const cloned = await git([
        '-c',
        `http.proxy=${proxyUrl}`,
        'clone',
        '-q',
        `http://git.test:${server.port}/repo.git`,
        join(place, 'cloned'),
      ])
      expect(cloned.stderr).toBe('')
      expect(cloned.code).toBe(0)
      const log = await git(['-C', join(place, 'cloned'), 'log', '--format=%s'])
      expect(log.stdout).toBe('first through the proxy\n')
      expect(gate.report().byName[`git.test:${server.port}`]?.connections).toBeGreaterThanOrEqual(2)
      const refused = await git([
        '-c',
        `http.proxy=${proxyUrl}`,
        'clone',
        '-q',
        `http://unlisted.test:${server.port}/repo.git`,
        join(place, 'refused'),
      ])
      expect(refused.code).not.toBe(0)
      expect(refused.stderr).toMatch(/403/)
    } finally {
      await server.close()
    }
    await waitFor(() => children.size === 0, 'every git http-backend to exit')
  })
})
