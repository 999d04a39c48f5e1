// toolvisor-netns with real processes, real sockets and real bwrap: what a launch inside the
// namespace can reach (the proxy, nothing else), what the host can reach of it (published ports),
// what descriptors it gets, that the bridge dies with it, and how bad input fails. As root, and
// the same as an ordinary user (a user namespace of its own then).
import { type ChildProcess, execFileSync, type StdioOptions, spawn, spawnSync } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { createSocket } from 'node:dgram'
import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { createServer as createHttpServer } from 'node:http'
import { connect, createServer, type Server } from 'node:net'
import { networkInterfaces } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Launch } from '@toolvisor/launchers'
import { spawnLaunch } from '@toolvisor/process-runtime'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import {
  builtNetnsHelper,
  inNetworkNamespace,
  NAMESPACE_PROXY_PORT,
  netnsHelperStatus,
} from '../src/netns.js'
import { alive, childNamed, type Ids, reachable, running, until, users } from './processes.js'

const helper = builtNetnsHelper
const CLEAN = { PATH: '/usr/bin:/bin', LC_ALL: 'C' }
const python = '/usr/bin/python3'
const BWRAP = [
  '/usr/bin/bwrap',
  '--unshare-user',
  '--disable-userns',
  '--die-with-parent',
  '--unshare-pid',
  '--ro-bind',
  '/',
  '/',
  '--proc',
  '/proc',
  '--dev',
  '/dev',
  '--',
]

// A directory every user can reach (/tmp itself, not a private TMPDIR), removed at the end.
let dir: string
beforeAll(() => {
  dir = mkdtempSync('/tmp/netns-test-')
  chmodSync(dir, 0o755)
  writeFileSync(join(dir, 'hello.txt'), 'hello from inside\n')
  chmodSync(join(dir, 'hello.txt'), 0o644)
})
afterAll(() => {
  rmSync(dir, { recursive: true, force: true })
})

// ---- processes: every launch is recorded, and each test ends proving none of them is left

const started: number[] = []
const bridges: number[] = []
const servers: Server[] = []

/** The bridge of the launch whose process is `pid`: its child still named toolvisor-netns. */
function bridgeOf(pid: number): number | undefined {
  const found = childNamed(pid, 'toolvisor-netns')
  if (found !== undefined && !bridges.includes(found)) bridges.push(found)
  return found
}

afterEach(async () => {
  const clean = () =>
    started.every((pid) => !alive(pid)) && bridges.every((pid) => !alive(pid)) && running(dir).length === 0
  await until(clean, 5_000)
  const left = [...new Set([...started.filter(alive), ...bridges.filter(alive), ...running(dir)])]
  for (const pid of left) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // gone meanwhile
    }
  }
  started.length = 0
  bridges.length = 0
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))))
  expect(left, 'processes left running after the test').toEqual([])
})

interface Ran {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

function start(
  args: readonly string[],
  ids: Ids | undefined,
  stdio: StdioOptions = ['ignore', 'pipe', 'pipe'],
) {
  const child = spawn(ids ? reachable(helper) : helper, args, { cwd: dir, env: CLEAN, stdio, ...(ids ?? {}) })
  if (child.pid !== undefined) started.push(child.pid)
  return child
}

function finished(child: ChildProcess): Promise<Ran> {
  let stdout = ''
  let stderr = ''
  child.stdout?.setEncoding('utf8').on('data', (text: string) => {
    stdout += text
  })
  child.stderr?.setEncoding('utf8').on('data', (text: string) => {
    stderr += text
  })
  return new Promise((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }))
  })
}

const run = (args: readonly string[], ids: Ids | undefined) => finished(start(args, ids))

// ---- servers on the host

async function listening(server: Server, at: string | number, host?: string): Promise<void> {
  servers.push(server)
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    if (typeof at === 'string') server.listen(at, resolve)
    else server.listen(at, host, resolve)
  })
  if (typeof at === 'string') chmodSync(at, 0o777) // the ordinary user's bridge connects to it
}

/** A unix-socket HTTP server standing in for the proxy: it answers with what it was asked. */
async function httpProxy(): Promise<string> {
  const path = join(dir, `http-${randomBytes(4).toString('hex')}.sock`)
  await listening(
    createHttpServer((request, response) => response.end(`proxy saw ${request.method} ${request.url}`)),
    path,
  )
  return path
}

/** A TCP server on the host's `host` (any free port) that counts the connections it gets. */
async function hostServer(
  host: string,
): Promise<{ readonly port: number; readonly connections: () => number }> {
  let connections = 0
  const server = createServer((socket) => {
    connections++
    socket.on('error', () => {}) // a client that resets (connectHost) is no failure here
    socket.end('host\n')
  })
  await listening(server, 0, host)
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  return { port: address.port, connections: () => connections }
}

async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  await new Promise((resolve) => server.close(resolve))
  if (address === null || typeof address === 'string') throw new Error('no port')
  return address.port
}

/** How a TCP connect to the host's 127.0.0.1:port ends: 'connected', or the error code. */
function connectHost(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve('connected')
    })
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message))
  })
}

async function get(url: string): Promise<string | undefined> {
  try {
    // Bounded: a connection the forwarder holds without an answer is a failure to see, never a hung test.
    const response = await fetch(url, { signal: AbortSignal.timeout(3000) })
    return await response.text()
  } catch {
    return undefined // reset while the server inside is not listening yet
  }
}

const hostAddress = Object.values(networkInterfaces())
  .flat()
  .find((address) => address !== undefined && !address.internal && address.family === 'IPv4')?.address
const hostHasIpv6 = existsSync('/proc/net/if_inet6')

// ---- the tests

describe('the built helper', () => {
  const source = fileURLToPath(new URL('../native/toolvisor-netns.c', import.meta.url))
  const script = fileURLToPath(new URL('../scripts/build-native.mjs', import.meta.url))

  it('is built and runs here (--version)', () => {
    expect(netnsHelperStatus()).toEqual({ available: true, path: builtNetnsHelper })
    const version = spawnSync(helper, ['--version'], { encoding: 'utf8' })
    expect(version.stdout).toBe('toolvisor-netns 1\n')
    expect(version.status).toBe(0)
  })

  it('compiles without a warning (-Wall -Wextra -Werror, which the build leaves out)', () => {
    const compiled = spawnSync(
      'cc',
      ['-std=gnu99', '-O2', '-Wall', '-Wextra', '-Werror', '-fsyntax-only', source],
      { encoding: 'utf8' },
    )
    expect(compiled.stderr).toBe('')
    expect(compiled.status).toBe(0)
  })

  it('without a compiler: the build succeeds, UNAVAILABLE says why, and so does netnsHelperStatus', () => {
    const out = join(dir, 'no-compiler')
    const built = spawnSync(process.execPath, [script, out], {
      encoding: 'utf8',
      env: { PATH: '/usr/bin:/bin', CC: '/nonexistent/cc' },
    })
    expect(built.status).toBe(0)
    const reason = 'no C compiler: "/nonexistent/cc" was not found'
    const fix = 'install a C compiler (apt-get install gcc) and rebuild @toolvisor/network'
    expect(readFileSync(join(out, 'UNAVAILABLE'), 'utf8')).toBe(`reason: ${reason}\nfix: ${fix}\n`)
    expect(netnsHelperStatus(join(out, 'toolvisor-netns'))).toEqual({
      available: false,
      path: join(out, 'toolvisor-netns'),
      reason: `toolvisor-netns is missing: ${reason}`,
      fix,
    })
  })
})

describe.each(users)('as $name', ({ ids }) => {
  const inside = (proxy: string, command: readonly string[], publish: readonly string[] = []) => [
    '--proxy',
    proxy,
    '--port',
    String(NAMESPACE_PROXY_PORT),
    ...publish,
    '--',
    ...command,
  ]

  it('inside: only lo, up; no TCP, UDP or DNS reaches the host', async () => {
    const proxy = await httpProxy()
    const links = await run(inside(proxy, ['/usr/sbin/ip', '-o', 'link']), ids)
    expect(links.stderr).toBe('')
    expect(links.stdout.trim().split('\n')).toHaveLength(1)
    expect(links.stdout).toMatch(/^1: lo: <LOOPBACK,UP,LOWER_UP> /)

    const loopback = await hostServer('127.0.0.1')
    const tcp = await run(
      inside(proxy, ['/usr/bin/curl', '-sS', '--max-time', '5', `http://127.0.0.1:${loopback.port}/`]),
      ids,
    )
    expect(tcp.code).toBe(7) // curl: could not connect
    expect(tcp.stderr).toContain("Couldn't connect to server")
    expect(loopback.connections()).toBe(0)
    // The host's own TCP listener answers the host: the refusal inside is the namespace's.
    expect(await connectHost(loopback.port)).toBe('connected')

    if (hostAddress !== undefined) {
      const everywhere = await hostServer('0.0.0.0')
      const far = await run(
        inside(proxy, [
          '/usr/bin/curl',
          '-sS',
          '--max-time',
          '5',
          `http://${hostAddress}:${everywhere.port}/`,
        ]),
        ids,
      )
      expect(far.code).toBe(7)
      expect(everywhere.connections()).toBe(0)
    }

    const received: string[] = []
    const udp = createSocket('udp4')
    udp.on('message', (message) => received.push(message.toString()))
    await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', resolve))
    const udpPort = udp.address().port
    const send = (address: string) => [
      python,
      '-c',
      'import socket, sys\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\ns.sendto(b"from inside", (sys.argv[1], int(sys.argv[2])))\nprint("sent")',
      address,
      String(udpPort),
    ]
    try {
      const sent = await run(inside(proxy, send('127.0.0.1')), ids)
      expect(sent).toMatchObject({ code: 0, stdout: 'sent\n' })
      if (hostAddress !== undefined) {
        const unreachable = await run(inside(proxy, send(hostAddress)), ids)
        expect(unreachable.code).toBe(1)
        expect(unreachable.stderr).toContain('Network is unreachable')
      }
      // A datagram the host sends itself comes after any the launch's could have: only it arrives.
      udp.send('from the host', udpPort, '127.0.0.1')
      expect(await until(() => received.length > 0)).toBe(true)
      expect(received).toEqual(['from the host'])
    } finally {
      udp.close()
    }

    const dns = await run(inside(proxy, ['/usr/bin/getent', 'hosts', 'example.com']), ids)
    expect(dns.code).not.toBe(0)
    expect(dns.stdout).toBe('')
  })

  it('127.0.0.1:3128 inside reaches the proxy on the host, also under bwrap without --unshare-net', async () => {
    const proxy = await httpProxy()
    const plain = await run(
      inside(proxy, ['/usr/bin/curl', '-sS', `http://127.0.0.1:${NAMESPACE_PROXY_PORT}/x`]),
      ids,
    )
    expect(plain).toMatchObject({ code: 0, stdout: 'proxy saw GET /x', stderr: '' })
    if (hostHasIpv6) {
      const six = await run(
        inside(proxy, ['/usr/bin/curl', '-sS', '-g', `http://[::1]:${NAMESPACE_PROXY_PORT}/six`]),
        ids,
      )
      expect(six).toMatchObject({ code: 0, stdout: 'proxy saw GET /six' })
    }

    const script = `/usr/sbin/ip -o link; /usr/bin/curl -sS http://127.0.0.1:${NAMESPACE_PROXY_PORT}/bwrap`
    const sandboxed = await run(inside(proxy, [...BWRAP, '/bin/sh', '-c', script]), ids)
    expect(sandboxed.stderr).toBe('')
    expect(sandboxed.code).toBe(0)
    const lines = sandboxed.stdout.split('\n')
    expect(lines[0]).toMatch(/^1: lo: <LOOPBACK,UP,LOWER_UP> /)
    expect(lines.slice(1)).toEqual(['proxy saw GET /bwrap'])
  })

  it('a proxy that refuses: the connection inside is reset at once', async () => {
    // A socket file nobody listens on: the bridge's connect is refused, curl hears a reset.
    const path = join(dir, `gone-${randomBytes(4).toString('hex')}.sock`)
    const bound = spawnSync(python, [
      '-c',
      'import socket, sys\nsocket.socket(socket.AF_UNIX).bind(sys.argv[1])',
      path,
    ])
    expect(bound.status).toBe(0)
    chmodSync(path, 0o777)
    const refused = await run(
      inside(path, ['/usr/bin/curl', '-sS', '--max-time', '5', `http://127.0.0.1:${NAMESPACE_PROXY_PORT}/`]),
      ids,
    )
    // curl hears the reset as a connect that failed (7) or, when it saw the connection made first,
    // as a failed receive (56): at once either way, never its timeout (28).
    expect(refused.stderr).toMatch(
      /^curl: \((7|56)\) .*(Couldn't connect to server|Connection reset by peer)\n$/,
    )
    // One that sends nothing hears the reset too (not an end of file, not a wait).
    const silent = await run(
      inside(path, [
        python,
        '-c',
        'import socket, sys\ns = socket.create_connection(("127.0.0.1", int(sys.argv[1])))\ntry:\n    print("eof", s.recv(1))\nexcept ConnectionResetError:\n    print("reset")',
        String(NAMESPACE_PROXY_PORT),
      ]),
      ids,
    )
    expect(silent).toMatchObject({ code: 0, stdout: 'reset\n' })
  })

  it('20 MB each way through the bridge arrive byte-exact, the half-close passed on', async () => {
    const upload = randomBytes(20 * 1024 * 1024)
    const download = randomBytes(20 * 1024 * 1024)
    const file = join(dir, `upload-${randomBytes(4).toString('hex')}.bin`)
    writeFileSync(file, upload)
    chmodSync(file, 0o644)
    const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')
    const got: { received: number; sha: string }[] = []
    const path = join(dir, `bulk-${randomBytes(4).toString('hex')}.sock`)
    const bulk = createServer({ allowHalfOpen: true }, (socket) => {
      const hash = createHash('sha256')
      let received = 0
      socket.on('data', (chunk: Buffer) => {
        hash.update(chunk)
        received += chunk.length
      })
      // The first half while the upload comes in; the rest once the upload's end was passed on
      // (a half-close: the launch's side stays open for reading).
      const half = download.length / 2
      socket.write(download.subarray(0, half))
      socket.on('end', () => {
        got.push({ received, sha: hash.digest('hex') })
        socket.end(download.subarray(half))
      })
    })
    await listening(bulk, path)
    const client = [
      'import hashlib, socket, sys',
      's = socket.create_connection(("127.0.0.1", int(sys.argv[1])))',
      's.sendall(open(sys.argv[2], "rb").read())',
      's.shutdown(socket.SHUT_WR)',
      'h, n = hashlib.sha256(), 0',
      'while True:',
      '    b = s.recv(1 << 16)',
      '    if not b: break',
      '    h.update(b); n += len(b)',
      'print(n, h.hexdigest())',
    ].join('\n')
    const result = await run(inside(path, [python, '-c', client, String(NAMESPACE_PROXY_PORT), file]), ids)
    expect(result.stderr).toBe('')
    expect(result.stdout).toBe(`${download.length} ${sha(download)}\n`)
    expect(got).toEqual([{ received: upload.length, sha: sha(upload) }])
  })

  it.each([
    ['', []],
    [' (--handoff: the hello goes first, the first byte is not a frame)', ['--handoff']],
  ])(
    'at most 512 connections at once: one more is reset, and a slot freed is used again%s',
    async (_, flags) => {
      // A proxy that holds every connection until its client leaves (it reads what comes, the
      // bridge's hello with --handoff: an end waits behind unread bytes).
      const path = join(dir, `hold-${randomBytes(4).toString('hex')}.sock`)
      await listening(
        createServer((socket) => {
          socket.on('error', () => {})
          socket.resume()
          socket.write('held\n')
        }),
        path,
      )
      const client = `
      const net = require('node:net')
      const count = 520
      const sockets = []
      let answered = 0, refused = 0, settled = 0
      for (let i = 0; i < count; i++) {
        const socket = net.connect(${NAMESPACE_PROXY_PORT}, '127.0.0.1')
        sockets.push(socket)
        let done = false
        const settle = (ok) => {
          if (done) return
          done = true
          if (ok) answered++
          else refused++
          if (++settled === count) after()
        }
        socket.once('data', () => settle(true))
        socket.once('error', () => settle(false))
        socket.once('end', () => settle(false))
      }
      function after() {
        console.log(answered, refused)
        for (const socket of sockets) socket.destroy()
        const retry = () => {
          const socket = net.connect(${NAMESPACE_PROXY_PORT}, '127.0.0.1')
          socket.once('data', () => { console.log('again'); process.exit(0) })
          socket.once('error', () => setTimeout(retry, 20))
          socket.once('end', () => setTimeout(retry, 20))
        }
        retry()
      }`
      const result = await run(inside(path, ['/usr/bin/node', '-e', client], flags), ids)
      // Six descriptors a connection (two sockets, two pipes), seven with --handoff (a tunnel's
      // control channel), from the bridge's raised limit.
      const hard = Number(execFileSync('/bin/sh', ['-c', 'ulimit -Hn'], { encoding: 'utf8' }).trim())
      const limit = Math.min(512, Math.floor((hard - 80) / (flags.length > 0 ? 7 : 6)))
      expect(result).toMatchObject({ code: 0, stdout: `${limit} ${520 - limit}\nagain\n`, stderr: '' })
    },
  )

  it('a published port answers from the host; one not published does not', async () => {
    const proxy = await httpProxy()
    const hostPort = await freePort()
    const innerPort = await freePort()
    const server = start(
      inside(
        proxy,
        [python, '-m', 'http.server', String(innerPort), '--bind', '127.0.0.1', '--directory', dir],
        ['--publish', `${hostPort}:${innerPort}`],
      ),
      ids,
    )
    const ended = finished(server)
    expect(await until(async () => (await get(`http://127.0.0.1:${hostPort}/hello.txt`)) !== undefined)).toBe(
      true,
    )
    expect(await get(`http://127.0.0.1:${hostPort}/hello.txt`)).toBe('hello from inside\n')
    // The server inside listens on innerPort, in the namespace only.
    expect(await connectHost(innerPort)).toBe('ECONNREFUSED')
    server.kill('SIGTERM')
    const timer = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms, 'still running'))
    expect(await Promise.race([ended.then(() => 'ended'), timer(10_000)]), 'the launch after SIGTERM').toBe(
      'ended',
    )
    expect(await until(async () => (await connectHost(hostPort)) === 'ECONNREFUSED')).toBe(true)
  })

  it('descriptors: what the caller passed reaches FILE unchanged, nothing of the helper does', async () => {
    const proxy = await httpProxy()
    /** What `ls -l /proc/self/fd` shows, by descriptor (ls's own listing of the directory left out). */
    const listed = async (through: boolean, name: string) => {
      const out = join(dir, `${name}-${randomBytes(4).toString('hex')}`)
      const fds = [out, `${out}.err`, `${out}.3`].map((path) => {
        const fd = openSync(path, 'w', 0o666)
        chmodSync(path, 0o666)
        return fd
      })
      const command = ['/bin/sh', '-c', 'ls -l /proc/self/fd; echo through-3 >&3; exec sleep 600']
      const stdio: StdioOptions = ['ignore', ...fds]
      const child = through
        ? start(inside(proxy, command), ids, stdio)
        : spawn(command[0] ?? '', command.slice(1), { cwd: dir, env: CLEAN, stdio, ...(ids ?? {}) })
      if (!through && child.pid !== undefined) started.push(child.pid)
      for (const fd of fds) closeSync(fd)
      const ended = finished(child)
      expect(await until(() => readFileSync(`${out}.3`, 'utf8') === 'through-3\n')).toBe(true)
      const listing = readFileSync(out, 'utf8')
        .split('\n')
        .flatMap((line) => {
          const found = line.match(/ (\d+) -> (.*)$/)
          if (found?.[1] === undefined || found[2] === undefined || /^\/proc\/\d+\/fd$/.test(found[2]))
            return []
          return [`${found[1]} -> ${found[2].replace(out, 'OUT')}`]
        })
        .sort()
      return { listing, pid: child.pid ?? 0, ended }
    }
    // The same spawn without the helper: what the caller passes (stdio, and whatever this test
    // process inherited without close-on-exec) is what FILE must get through it.
    const direct = await listed(false, 'direct')
    process.kill(direct.pid, 'SIGTERM')
    await direct.ended
    const through = await listed(true, 'through')
    expect(through.listing).toEqual(direct.listing)
    expect(through.listing).toEqual(
      expect.arrayContaining(['0 -> /dev/null', '1 -> OUT', '2 -> OUT.err', '3 -> OUT.3']),
    )
    expect(through.listing.join('\n')).not.toMatch(/socket:|eventpoll/)

    // The bridge holds none of the caller's descriptors: /dev/null, its sockets and its epoll only.
    expect(await until(() => bridgeOf(through.pid) !== undefined)).toBe(true)
    const bridge = bridgeOf(through.pid) ?? 0
    const held = readdirSync(`/proc/${bridge}/fd`).map((fd) => readlinkSync(`/proc/${bridge}/fd/${fd}`))
    for (const target of held)
      expect(target).toMatch(/^(\/dev\/null|socket:\[\d+\]|anon_inode:\[eventpoll\])$/)
    expect(held.filter((target) => target.startsWith('socket:'))).toHaveLength(hostHasIpv6 ? 2 : 1)

    process.kill(through.pid, 'SIGTERM')
    expect((await through.ended).signal).toBe('SIGTERM')
  })

  it('kill -9 of the launched program: the bridge dies too, the published port stops answering', async () => {
    const proxy = await httpProxy()
    const hostPort = await freePort()
    const innerPort = await freePort()
    const child = start(
      inside(
        proxy,
        [python, '-m', 'http.server', String(innerPort), '--bind', '127.0.0.1', '--directory', dir],
        ['--publish', `${hostPort}:${innerPort}`],
      ),
      ids,
    )
    const ended = finished(child)
    const pid = child.pid ?? 0
    expect(await until(async () => (await get(`http://127.0.0.1:${hostPort}/hello.txt`)) !== undefined)).toBe(
      true,
    )
    const bridge = bridgeOf(pid)
    expect(bridge).toBeDefined()
    // Out of the launch's process group: a cancel signal for the tool does not cut its network.
    expect(readFileSync(`/proc/${bridge}/stat`, 'utf8').split(') ')[1]?.split(' ')[2]).toBe(String(bridge))

    process.kill(pid, 'SIGKILL')
    expect((await ended).signal).toBe('SIGKILL')
    expect(await until(() => !alive(bridge ?? 0))).toBe(true)
    expect(await connectHost(hostPort)).toBe('ECONNREFUSED')
  })

  describe('bad input: 125 with one line, nothing run', () => {
    it('--proxy missing', async () => {
      expect(await run(['--port', '3128', '--', '/bin/true'], ids)).toEqual({
        code: 125,
        signal: null,
        stdout: '',
        stderr: "toolvisor-netns: --proxy: missing: the path of the proxy's unix socket\n",
      })
    })

    it('a bad port', async () => {
      const proxy = await httpProxy()
      for (const port of ['0', '65536', '31x', '']) {
        expect(await run(['--proxy', proxy, '--port', port, '--', '/bin/true'], ids)).toMatchObject({
          code: 125,
          stderr: `toolvisor-netns: --port ${port}: expected a port number from 1 to 65535\n`,
        })
      }
      expect(
        await run(['--proxy', proxy, '--port', '3128', '--publish', '8080', '--', '/bin/true'], ids),
      ).toMatchObject({
        code: 125,
        stderr:
          'toolvisor-netns: --publish 8080: expected HOSTPORT:INNERPORT, port numbers from 1 to 65535\n',
      })
    })

    it('a proxy that is not a socket', async () => {
      const file = join(dir, 'hello.txt')
      expect(await run(['--proxy', file, '--port', '3128', '--', '/bin/true'], ids)).toMatchObject({
        code: 125,
        stderr: `toolvisor-netns: --proxy ${file}: not a unix socket\n`,
      })
      expect(
        await run(['--proxy', join(dir, 'none.sock'), '--port', '3128', '--', '/bin/true'], ids),
      ).toMatchObject({
        code: 125,
        stderr: `toolvisor-netns: --proxy ${join(dir, 'none.sock')}: No such file or directory\n`,
      })
    })

    it('--publish of a host port in use', async () => {
      const proxy = await httpProxy()
      const taken = await hostServer('127.0.0.1')
      const result = await run(
        ['--proxy', proxy, '--port', '3128', '--publish', `${taken.port}:8000`, '--', '/bin/true'],
        ids,
      )
      expect(result).toEqual({
        code: 125,
        signal: null,
        stdout: '',
        stderr: `toolvisor-netns: cannot publish port ${taken.port} on the host's 127.0.0.1: Address already in use\n`,
      })
    })

    it('no namespace can be made (inside bwrap --disable-userns): refused, never run on the host network', async () => {
      const proxy = await httpProxy()
      const args = ['--proxy', proxy, '--port', '3128', '--', '/usr/bin/curl', '-sS', 'http://127.0.0.1:1/']
      // --cap-drop ALL: root inside would otherwise keep CAP_SYS_ADMIN there and make one.
      const child = spawn(
        BWRAP[0] ?? '',
        ['--cap-drop', 'ALL', ...BWRAP.slice(1), ids ? reachable(helper) : helper, ...args],
        {
          cwd: dir,
          env: CLEAN,
          ...(ids ?? {}),
        },
      )
      if (child.pid !== undefined) started.push(child.pid)
      const result = await finished(child)
      expect(result.code).toBe(125)
      expect(result.stderr).toMatch(
        /^toolvisor-netns: unshare\(CLONE_NEWUSER\|CLONE_NEWNET\): No space left on device \(a user namespace is needed/,
      )
      expect(result.stderr.split('\n')).toHaveLength(2)
    })

    it('FILE missing: 127, like a shell', async () => {
      const proxy = await httpProxy()
      expect(await run(['--proxy', proxy, '--port', '3128', '--', '/nonexistent/tool'], ids)).toEqual({
        code: 127,
        signal: null,
        stdout: '',
        stderr: 'toolvisor-netns: exec /nonexistent/tool: No such file or directory\n',
      })
    })
  })
})

describe('inNetworkNamespace', () => {
  const launch: Launch = {
    file: '/proc/self/fd/3',
    args: ['-c', 'echo hi'],
    env: { PATH: '/usr/bin:/bin' },
    cwd: '/',
    extraFds: [{ kind: 'file', path: '/usr/bin/dash' }],
  }

  it('puts the helper first; only file and args change', () => {
    const wrapped = inNetworkNamespace(launch, {
      proxy: '/run/proxy.sock',
      helper: '/opt/netns',
      publish: [
        { host: 3000, inner: 3000 },
        { host: 8081, inner: 80 },
      ],
    })
    expect(wrapped).toEqual({
      ...launch,
      file: '/opt/netns',
      args: [
        '--proxy',
        '/run/proxy.sock',
        '--port',
        '3128',
        '--publish',
        '3000:3000',
        '--publish',
        '8081:80',
        '--',
        '/proc/self/fd/3',
        '-c',
        'echo hi',
      ],
    })
    expect(wrapped.env).toBe(launch.env)
    expect(wrapped.extraFds).toBe(launch.extraFds)
  })

  it('with handoff (a gate of this package as the proxy), --handoff too', () => {
    const wrapped = inNetworkNamespace(launch, {
      proxy: '/run/proxy.sock',
      helper: '/opt/netns',
      handoff: true,
    })
    expect(wrapped.args).toEqual([
      '--proxy',
      '/run/proxy.sock',
      '--port',
      '3128',
      '--handoff',
      '--',
      '/proc/self/fd/3',
      '-c',
      'echo hi',
    ])
  })

  it('a launch spawned as the runtime spawns it, its file a descriptor of its extraFds, runs inside', async () => {
    const proxy = await httpProxy()
    const shell = realpathSync('/bin/sh')
    const wrapped = inNetworkNamespace(
      {
        ...launch,
        args: [
          '-c',
          `/usr/sbin/ip -o link | wc -l; /usr/bin/curl -sS http://127.0.0.1:${NAMESPACE_PROXY_PORT}/launch`,
        ],
        cwd: dir,
        extraFds: [{ kind: 'file', path: shell }],
      },
      { proxy, helper },
    )
    const { child } = spawnLaunch(wrapped)
    if (child.pid !== undefined) started.push(child.pid)
    expect(await finished(child)).toMatchObject({ code: 0, stdout: '1\nproxy saw GET /launch', stderr: '' })
  })
})

describe('netnsHelperStatus', () => {
  it('a helper that was never built: why, and to rebuild this package', () => {
    const empty = join(dir, 'never-built')
    mkdirSync(empty)
    const path = join(empty, 'toolvisor-netns')
    expect(netnsHelperStatus(path)).toEqual({
      available: false,
      path,
      reason: `toolvisor-netns is missing: ${path} does not exist or is not executable`,
      fix: 'install a C compiler (apt-get install gcc) and rebuild @toolvisor/network',
    })
  })

  it('a helper its build could not make: the reason and fix it recorded', () => {
    const out = join(dir, 'unavailable')
    mkdirSync(out)
    writeFileSync(join(out, 'UNAVAILABLE'), 'reason: no C compiler: "cc" was not found\nfix: install one\n')
    expect(netnsHelperStatus(join(out, 'toolvisor-netns'))).toEqual({
      available: false,
      path: join(out, 'toolvisor-netns'),
      reason: 'toolvisor-netns is missing: no C compiler: "cc" was not found',
      fix: 'install one',
    })
  })
})
