// The handoff (decision 0111) with real processes and real sockets: `toolvisor-netns --handoff`
// in front of a real gate of the proxy, clients inside the namespace, targets on the host. An
// approved CONNECT is connected by the connector and carried by the bridge; the proxy decides,
// answers what is refused and counts. As root, and as the ordinary user (the bridge and the
// connector then run as that user, the namespace in a user namespace of its own).
import { type ChildProcess, type StdioOptions, spawn } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import {
  chmodSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { createServer, type Server, type Socket } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createProxy, type Gate, type NetProxy } from '../src/index.js'
import { builtNetnsHelper, NAMESPACE_PROXY_PORT } from '../src/netns.js'
import { type ChildServer, childServer } from './helpers.js'
import { alive, childNamed, type Ids, reachable, running, until, users } from './processes.js'

const CLEAN = { PATH: '/usr/bin:/bin', LC_ALL: 'C' }
const python = '/usr/bin/python3'
const MB = 1024 * 1024
const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')

// The test seam: these names lead to the host's loopback, where the targets listen; nothing else resolves.
const NAMES: Record<string, readonly string[]> = {
  'allowed.test': ['127.0.0.1'],
  'denied.test': ['127.0.0.1'],
  // The first address refuses, the second answers: the bridge tries them in the frame's order.
  'second.test': ['127.0.0.2', '127.0.0.1'],
}

// A directory every user can reach (/tmp itself), removed at the end.
let dir: string
let proxy: NetProxy
beforeAll(() => {
  dir = mkdtempSync('/tmp/handoff-test-')
  chmodSync(dir, 0o755)
  proxy = createProxy({
    resolve: async (host) => {
      const found = NAMES[host]
      if (found === undefined) throw new Error(`getaddrinfo ENOTFOUND ${host}`)
      return found
    },
    connectTimeoutMs: 1_500,
  })
})
afterAll(async () => {
  await proxy.close()
  rmSync(dir, { recursive: true, force: true })
})

// ---- processes and sockets: each test ends proving that none of its launches is left, nor
// the bridge and the connector of any

const started: number[] = []
const helpers: number[] = []
const servers: Server[] = []
const fixtures: ChildServer[] = []

afterEach(async () => {
  for (const pid of started) for (const name of ['toolvisor-netns', 'netns-connector']) helperOf(pid, name)
  const clean = () => [...started, ...helpers].every((pid) => !alive(pid)) && running(dir).length === 0
  await until(clean, 5_000)
  const left = [...new Set([...started.filter(alive), ...helpers.filter(alive), ...running(dir)])]
  for (const pid of left) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // gone meanwhile
    }
  }
  started.length = 0
  helpers.length = 0
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))))
  await Promise.all(fixtures.splice(0).map((fixture) => fixture.close()))
  expect(left, 'processes left running after the test').toEqual([])
})

/** The launch's child named `name` (`toolvisor-netns`: the bridge; `netns-connector`), recorded. */
function helperOf(pid: number, name: string): number | undefined {
  const found = childNamed(pid, name)
  if (found !== undefined && !helpers.includes(found)) helpers.push(found)
  return found
}

/** A gate on a unix socket in `dir`, open to the ordinary user's bridge too. */
async function gateOf(allow: readonly string[] = ['allowed.test', 'second.test']): Promise<Gate> {
  const gate = await proxy.open({
    id: 'handoff-test',
    rules: { allow, deny: [] },
    listen: { unix: join(dir, `gate-${randomBytes(4).toString('hex')}.sock`) },
  })
  chmodSync(gate.unixPath ?? '', 0o777)
  return gate
}

interface Ran {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

/** `command` in a namespace bridged to `gate` with --handoff, as `ids`. */
function launch(gate: Gate, command: readonly string[], ids: Ids | undefined): ChildProcess {
  const args = ['--proxy', gate.unixPath ?? '', '--port', String(NAMESPACE_PROXY_PORT), '--handoff', '--']
  const stdio: StdioOptions = ['ignore', 'pipe', 'pipe']
  const child = spawn(ids ? reachable(builtNetnsHelper) : builtNetnsHelper, [...args, ...command], {
    cwd: dir,
    env: CLEAN,
    stdio,
    ...(ids ?? {}),
  })
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

/** A TCP server on the host's 127.0.0.1 giving each connection to `handler`. */
async function target(handler: (socket: Socket) => void): Promise<number> {
  const server = createServer({ allowHalfOpen: true }, (socket) => {
    socket.on('error', () => {})
    handler(socket)
  })
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  return address.port
}

/** A file of `bytes` every user may read, in `dir`. */
function file(bytes: Uint8Array): string {
  const path = join(dir, `data-${randomBytes(4).toString('hex')}.bin`)
  writeFileSync(path, bytes)
  chmodSync(path, 0o644)
  return path
}

/**
 * A target that hashes what it gets and sends `download`: the first half at once, the rest once
 * the client's end came (a half-close carried across). `got` holds, per connection, what it
 * received and the port its peer connected from.
 */
async function bulkTarget(download: Buffer) {
  const got: { received: number; sha: string; peerPort: number }[] = []
  const port = await target((socket) => {
    const hash = createHash('sha256')
    let received = 0
    socket.on('data', (chunk: Buffer) => {
      hash.update(chunk)
      received += chunk.length
    })
    const half = download.length / 2
    socket.write(download.subarray(0, half))
    socket.on('end', () => {
      got.push({ received, sha: hash.digest('hex'), peerPort: socket.remotePort ?? 0 })
      socket.end(download.subarray(half))
    })
  })
  return { port, got }
}

/**
 * The process holding the socket of the host's loopback whose local port is `port`: /proc/net/tcp
 * names its inode, some process's /proc/PID/fd a link to it. Undefined once nobody holds it.
 */
function holderOf(port: number): number | undefined {
  const inodes = readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter(
      (fields) => fields[1] !== undefined && Number.parseInt(fields[1].split(':')[1] ?? '', 16) === port,
    )
    .map((fields) => fields[9])
  for (const pid of readdirSync('/proc').map(Number).filter(Number.isInteger)) {
    try {
      for (const fd of readdirSync(`/proc/${pid}/fd`)) {
        const link = readlinkSync(`/proc/${pid}/fd/${fd}`)
        if (inodes.some((inode) => link === `socket:[${inode}]`)) return pid
      }
    } catch {
      // gone, or not ours to read
    }
  }
  return undefined
}

const CLIENT = fileURLToPath(new URL('./fixtures/bridge-client.py', import.meta.url))

/** bridge-client.py inside a namespace bridged to `gate` (its modes: see the fixture). */
const client = (gate: Gate, args: readonly string[], ids: Ids | undefined) =>
  launch(gate, [python, ids ? reachable(CLIENT) : CLIENT, String(NAMESPACE_PROXY_PORT), ...args], ids)

/** What a `hold` client printed: its status line, the bytes that came (all pieces), how it ended. */
function held(stdout: string): { status: string; bytes: Buffer; end: string } {
  const lines = stdout.trim().split('\n')
  const pieces = lines
    .filter((line) => line.startsWith('data '))
    .map((line) => Buffer.from(line.slice(5), 'hex'))
  return { status: lines[0] ?? '', bytes: Buffer.concat(pieces), end: lines.at(-1) ?? '' }
}

/**
 * A target that sends `greeting` and holds the connection until `end()`; `closed` counts the
 * connections that ended from the other side (an end, which it answers with its own, or a reset).
 */
async function heldTarget(greeting: string) {
  const sockets: Socket[] = []
  let closed = 0
  const port = await target((socket) => {
    sockets.push(socket)
    socket.once('end', () => socket.end())
    socket.once('close', () => closed++)
    socket.write(greeting)
  })
  return {
    port,
    sockets,
    closed: () => closed,
    end: () => {
      for (const socket of sockets) socket.end('bye')
    },
  }
}

/** Waits until `child`'s stdout holds `text`, and returns it. */
function printed(child: ChildProcess, text: string): Promise<string> {
  let out = ''
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      if (out.includes(text)) resolve(out)
    })
    child.once('close', () =>
      out.includes(text) ? resolve(out) : reject(new Error(`ended without ${text}: ${out}`)),
    )
  })
}

describe.each(users)('as $name', ({ ids }) => {
  it('20 MB each way through the handoff arrive byte-exact, the half-close carried, every byte counted', async () => {
    const upload = randomBytes(20 * MB)
    const download = randomBytes(20 * MB)
    const bulk = await bulkTarget(download)
    const gate = await gateOf()
    const result = await finished(client(gate, ['connect', `allowed.test:${bulk.port}`, file(upload)], ids))
    expect(result.stderr).toBe('')
    expect(result.stdout).toBe(`HTTP/1.1 200 Connection Established\n${download.length} ${sha(download)}\n`)
    expect(bulk.got).toEqual([{ received: upload.length, sha: sha(upload), peerPort: expect.any(Number) }])
    // Counted when the tunnel ends, as the bridge counted: exactly the target's bytes each way.
    expect(await until(() => gate.report().bytesIn > 0)).toBe(true)
    const key = `allowed.test:${bulk.port}`
    expect(gate.report()).toEqual({
      connections: 1,
      bytesIn: download.length,
      bytesOut: upload.length,
      byName: { [key]: { connections: 1, bytesIn: download.length, bytesOut: upload.length } },
      denied: [],
      deniedCount: 0,
    })
  })

  it('what a client sends before the 200 (pipelined, 20 MB) reaches the target first and whole, in order', async () => {
    const upload = randomBytes(20 * MB)
    const download = randomBytes(2 * MB)
    const bulk = await bulkTarget(download)
    const gate = await gateOf()
    const result = await finished(
      client(gate, ['connect', `allowed.test:${bulk.port}`, file(upload), 'pipelined'], ids),
    )
    expect(result.stderr).toBe('')
    expect(result.stdout).toBe(`HTTP/1.1 200 Connection Established\n${download.length} ${sha(download)}\n`)
    expect(bulk.got).toEqual([{ received: upload.length, sha: sha(upload), peerPort: expect.any(Number) }])
    expect(await until(() => gate.report().bytesOut === upload.length)).toBe(true)
    expect(gate.report()).toMatchObject({ connections: 1, bytesIn: download.length, bytesOut: upload.length })
  })

  it('the bridge holds the connection to the target, the proxy none, and tells its bytes as they go', async () => {
    const hold = await heldTarget('ready')
    const gate = await gateOf()
    const child = client(gate, ['hold', `allowed.test:${hold.port}`], ids)
    const ended = finished(child)
    await printed(child, `data ${Buffer.from('ready').toString('hex')}`)
    const pid = child.pid ?? 0
    const bridge = helperOf(pid, 'toolvisor-netns')
    expect(bridge).toBeDefined()
    expect(helperOf(pid, 'netns-connector')).toBeDefined()
    // The target's peer: a socket the bridge holds (the connector made it and passed it on).
    expect(holderOf(hold.sockets[0]?.remotePort ?? 0)).toBe(bridge)
    // Counted as a connection, and its bytes while it runs, as the bridge tells them.
    expect(await until(() => gate.report().bytesIn === 5)).toBe(true)
    expect(gate.report()).toMatchObject({ connections: 1, bytesIn: 5, bytesOut: 0 })
    hold.end()
    const result = await ended
    expect(held(result.stdout)).toEqual({
      status: 'HTTP/1.1 200 Connection Established',
      bytes: Buffer.from('readybye'),
      end: 'end',
    })
    expect(await until(() => gate.report().bytesIn === 8)).toBe(true)
    expect(gate.report()).toMatchObject({ connections: 1, bytesIn: 8, bytesOut: 0 })
  })

  it('a name not in the list: 403 from the proxy, with the denial; nothing connected', async () => {
    let reached = 0
    const port = await target(() => reached++)
    const gate = await gateOf()
    const result = await finished(client(gate, ['hold', `denied.test:${port}`], ids))
    const answer = held(result.stdout)
    expect(answer.status).toBe('HTTP/1.1 403 Forbidden')
    expect(answer.bytes.toString()).toBe(`toolvisor: blocked denied.test:${port}, not in the allow list\n`)
    expect(gate.report()).toMatchObject({ connections: 0, deniedCount: 1 })
    expect(gate.report().denied[0]).toMatchObject({
      host: 'denied.test',
      port,
      reason: 'not in the allow list',
    })
    expect(reached).toBe(0)
  })

  it('a target that refuses: 502 and the denial; one that does not answer: 504; the next address is tried', async () => {
    const closed = await new Promise<number>((resolve) => {
      const server = createServer()
      server.listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number }
        server.close(() => resolve(port))
      })
    })
    const gate = await gateOf()
    const refused = held((await finished(client(gate, ['hold', `allowed.test:${closed}`], ids))).stdout)
    expect(refused.status).toBe('HTTP/1.1 502 Bad Gateway')
    expect(refused.bytes.toString()).toBe(
      `toolvisor: blocked allowed.test:${closed}, connection refused by the target\n`,
    )

    const silent = await childServer(python, [
      fileURLToPath(new URL('./fixtures/silent-server.py', import.meta.url)),
    ])
    fixtures.push(silent)
    const hung = held((await finished(client(gate, ['hold', `allowed.test:${silent.port}`], ids))).stdout)
    expect(hung.status).toBe('HTTP/1.1 504 Gateway Timeout')
    expect(hung.bytes.toString()).toBe(
      `toolvisor: blocked allowed.test:${silent.port}, timed out connecting\n`,
    )

    // second.test is 127.0.0.2 (nothing listens there on this port) and then 127.0.0.1.
    const hold = await heldTarget('second')
    const second = client(gate, ['hold', `second.test:${hold.port}`], ids)
    const done = finished(second)
    await printed(second, Buffer.from('second').toString('hex'))
    hold.end()
    expect(held((await done).stdout).bytes.toString()).toBe('secondbye')

    expect(gate.report().denied.map((denial) => denial.reason)).toEqual([
      'connection refused by the target',
      'timed out connecting',
    ])
    expect(gate.report()).toMatchObject({ connections: 1, deniedCount: 2 })
  })

  it('closing the gate ends a running tunnel, both sides', async () => {
    const hold = await heldTarget('ready')
    const gate = await gateOf()
    const child = client(gate, ['hold', `allowed.test:${hold.port}`], ids)
    const ended = finished(child)
    await printed(child, Buffer.from('ready').toString('hex'))
    await gate.close()
    expect(['end', 'reset']).toContain(held((await ended).stdout).end)
    expect(await until(() => hold.closed() === 1)).toBe(true)
  })

  it("a tunnel holds its connection slot until it ends (the proxy's maxConnections)", async () => {
    const one = createProxy({ resolve: async () => ['127.0.0.1'], maxConnections: 1 })
    try {
      const gate = await one.open({
        id: 'one',
        rules: { allow: ['allowed.test'], deny: [] },
        listen: { unix: join(dir, `one-${randomBytes(4).toString('hex')}.sock`) },
      })
      chmodSync(gate.unixPath ?? '', 0o777)
      const hold = await heldTarget('first')
      const first = client(gate, ['hold', `allowed.test:${hold.port}`], ids)
      const firstEnded = finished(first)
      await printed(first, Buffer.from('first').toString('hex'))
      const refused = held((await finished(client(gate, ['hold', `allowed.test:${hold.port}`], ids))).stdout)
      expect(refused.status).toBe('HTTP/1.1 403 Forbidden')
      expect(refused.bytes.toString()).toContain('too many connections (1)')
      hold.end()
      await firstEnded
      // The slot comes back when the bridge closes its control channel.
      const again = client(gate, ['hold', `allowed.test:${hold.port}`], ids)
      const againEnded = finished(again)
      await printed(again, Buffer.from('first').toString('hex'))
      hold.end()
      expect(held((await againEnded).stdout).status).toBe('HTTP/1.1 200 Connection Established')
    } finally {
      await one.close()
    }
  })

  it('kill -9 of the launched program mid-tunnel: the bridge tells its last bytes, then it and the connector die', async () => {
    const hold = await heldTarget('ready')
    const gate = await gateOf()
    const child = client(gate, ['hold', `allowed.test:${hold.port}`], ids)
    const ended = finished(child)
    await printed(child, Buffer.from('ready').toString('hex'))
    expect(await until(() => gate.report().bytesIn === 5)).toBe(true) // told at once: the first bytes
    // Bytes within 100 ms of the last told are told at the tunnel's end: here, the launch's.
    hold.sockets[0]?.write('more!')
    await printed(child, Buffer.from('more!').toString('hex'))
    const pid = child.pid ?? 0
    const bridge = helperOf(pid, 'toolvisor-netns') ?? 0
    const connector = helperOf(pid, 'netns-connector') ?? 0
    expect(bridge).toBeGreaterThan(0)
    expect(connector).toBeGreaterThan(0)
    process.kill(pid, 'SIGKILL')
    expect((await ended).signal).toBe('SIGKILL')
    expect(await until(() => !alive(bridge) && !alive(connector))).toBe(true)
    expect(await until(() => hold.closed() === 1)).toBe(true)
    expect(await until(() => gate.report().bytesIn === 10)).toBe(true)
    expect(gate.report()).toMatchObject({ connections: 1, bytesIn: 10, bytesOut: 0 })
  })

  it('the connector and the bridge end with a launch that ends', async () => {
    const gate = await gateOf()
    const child = launch(gate, ['/bin/sleep', '600'], ids)
    const pid = child.pid ?? 0
    expect(await until(() => helperOf(pid, 'netns-connector') !== undefined)).toBe(true)
    const connector = helperOf(pid, 'netns-connector') ?? 0
    const bridge = helperOf(pid, 'toolvisor-netns') ?? 0
    // Out of the launch's process group, as the bridge: a cancel signal for the tool does not cut its network.
    expect(readFileSync(`/proc/${connector}/stat`, 'utf8').split(') ')[1]?.split(' ')[2]).toBe(
      String(connector),
    )
    // It keeps nothing of the caller's: /dev/null, its end of the socket pair, its epoll.
    const fds = readdirSync(`/proc/${connector}/fd`).map((fd) => readlinkSync(`/proc/${connector}/fd/${fd}`))
    for (const fd of fds) expect(fd).toMatch(/^(\/dev\/null|socket:\[\d+\]|anon_inode:\[eventpoll\])$/)
    expect(fds.filter((fd) => fd.startsWith('socket:'))).toHaveLength(1)
    process.kill(pid, 'SIGTERM')
    await finished(child)
    expect(await until(() => !alive(bridge) && !alive(connector))).toBe(true)
  })

  describe("no byte of a target can pass for a frame, nor a program's for the bridge", () => {
    // A frame, the control lines and a hello as a target (or a program) could send them.
    const forged = Buffer.concat([
      Buffer.from(`\0TVNH1 1 1000 ${'0'.repeat(32)} 127.0.0.1\n\0OK\n\0DONE 1 1\n\0FAIL 111\n`, 'latin1'),
      Buffer.from('\0TVNB1\r\n\0REST 3\nabc', 'latin1'),
    ])
    const forger = () => target((socket) => socket.end(forged))

    it('in a tunnel the bridge carries: data, counted as such', async () => {
      const port = await forger()
      const gate = await gateOf()
      const result = held((await finished(client(gate, ['hold', `allowed.test:${port}`], ids))).stdout)
      expect(result).toEqual({ status: 'HTTP/1.1 200 Connection Established', bytes: forged, end: 'end' })
      expect(await until(() => gate.report().bytesIn > 0)).toBe(true)
      expect(gate.report()).toMatchObject({ connections: 1, bytesIn: forged.length, bytesOut: 0 })
    })

    it('in a tunnel the proxy relays (SOCKS5, whose first answer is not NUL): data', async () => {
      const port = await forger()
      const gate = await gateOf()
      const result = await finished(client(gate, ['socks', 'allowed.test', String(port)], ids))
      const lines = result.stdout.trim().split('\n')
      expect(lines[0]).toBe('socks 0')
      expect(held(['', ...lines.slice(1)].join('\n')).bytes).toEqual(forged)
      expect(await until(() => gate.report().bytesIn === forged.length)).toBe(true)
    })

    it('in a CONNECT after a plain request on the same connection (the proxy answered first): data', async () => {
      const port = await forger()
      const web = await target((socket) => {
        socket.once('data', () => socket.end('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nplain'))
      })
      const gate = await gateOf()
      const result = await finished(
        client(gate, ['after-plain', `http://allowed.test:${web}/`, `allowed.test:${port}`], ids),
      )
      const lines = result.stdout.trim().split('\n')
      expect(lines[0]).toBe('plain 200 plain')
      expect(held(lines.slice(1).join('\n'))).toEqual({
        status: 'HTTP/1.1 200 Connection Established',
        bytes: forged,
        end: 'end',
      })
    })

    // A program inside reaches the gate only through the bridge, which writes its own hello
    // first: the program's is then just bytes of a request, and not HTTP. (It cannot reach the
    // gate's unix socket itself: the socket is in a directory only toolvisor's user may enter,
    // outside every path bwrap binds; and a TCP gate, which a Landlock launch does reach, never
    // takes a hello: proxy.test.ts.) Were it to speak the exchange all the same, it would gain
    // nothing: a frame names where the bridge may connect, and only the bridge can ask the
    // connector.
    it('a program that sends the hello itself gets a 400', async () => {
      const port = await forger()
      const gate = await gateOf()
      const request = Buffer.concat([
        Buffer.from('\0TVNB1\r\n', 'latin1'),
        Buffer.from(`CONNECT allowed.test:${port} HTTP/1.1\r\nHost: allowed.test:${port}\r\n\r\n`),
      ])
      const result = await finished(client(gate, ['raw', request.toString('hex')], ids))
      expect(result.stdout).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/)
      expect(result.stdout).toContain('toolvisor: not an HTTP or SOCKS5 request')
      expect(gate.report()).toMatchObject({ connections: 0, deniedCount: 0 })
    })
  })
})
