/**
 * A network allow list under Landlock (issue 32): the `port` route, no network namespace. A plain
 * HTTP server on the host's 127.0.0.1 stands in for toolvisor's proxy (port P), another for what
 * the list does not name (Q); R is the published port. The tool reaches P (curl, python, curl with
 * P as its HTTP proxy) and nothing else: Q is EACCES (Landlock's TCP rules), a UDP socket EPERM
 * (the filter's stream variant), so DNS goes nowhere; it binds R and the host reaches its server
 * there, any other port EACCES; no unix or netlink socket. As root (the tool as the run_as user)
 * and as an ordinary user (the launcher in a user namespace of its own).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { createSocket, type Socket } from 'node:dgram'
import { chmodSync, copyFileSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { type AddressInfo, connect } from 'node:net'
import { join } from 'node:path'
import type { Launch, NetAllowList, NetworkRoute, RunAsTarget, SandboxPolicy } from '@toolvisor/launchers'
import { type UdpSink, udpSink } from '@toolvisor/process-runtime/testing'
import { syscallFilter } from '@toolvisor/syscall-filter'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { builtLauncher, interpretFeatures, probeLauncher } from '../src/internal/launcher.js'
import { execMinimum, launcherArgs } from '../src/internal/policy.js'
import { landlockMechanism } from '../src/mechanism.js'
import {
  exitOf,
  type Finished,
  filterStdio,
  finish,
  hasPython,
  isRoot,
  launcherLifecycle,
  launchOf,
  policyFor,
  start,
  tempDir,
  waitForOutput,
  writeTool,
} from './helpers.js'

const mechanism = landlockMechanism()
const status = await probeLauncher(builtLauncher)
const abi = status.available ? status.abi : 0
const testUser = launcherLifecycle('tvnl')
const tcpRules = abi >= 4 && hasPython
const needs = 'needs Landlock ABI >= 4 and /usr/bin/python3'

/**
 * The tool: runs the operations given as JSON in argv[1] and prints one JSON object, per key the
 * result or the errno name (EACCES, EPERM); a command's stdout, or `exit N`.
 */
const netSource = `#!/usr/bin/python3
import errno, json, socket, subprocess, sys

def connect(port):
    with socket.socket() as s:
        s.settimeout(10)
        s.connect(("127.0.0.1", port))
        s.sendall(b"GET /python HTTP/1.0\\r\\n\\r\\n")
        data = b""
        while True:
            chunk = s.recv(4096)
            if not chunk:
                return data.decode().split("\\r\\n\\r\\n", 1)[1]
            data += chunk

def udp(port):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.sendto(b"query from the tool", ("127.0.0.1", port))
    return "sent"

def bind(port):
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", port))
    return "ok"

def listen():
    # No bind: the kernel picks an ephemeral port on every address (the gap describe() states).
    with socket.socket() as s:
        s.listen()
    return "ok"

def serve(port):
    with socket.socket() as s:
        # As servers do: the port of the last run may still hold a connection in TIME_WAIT.
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", port))
        s.listen()
        print("listening", flush=True)
        s.settimeout(10)
        conn, _ = s.accept()
        with conn:
            conn.sendall(b"hello from the tool")
    return "served"

def run(*argv):
    done = subprocess.run(list(argv), capture_output=True, text=True, timeout=20)
    return done.stdout if done.returncode == 0 else "exit %d" % done.returncode

ops = {
    "connect": connect,
    "udp": udp,
    "unix": lambda: socket.socket(socket.AF_UNIX).close() or "ok",
    "netlink": lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0).close() or "ok",
    "bind": bind,
    "listen": listen,
    "serve": serve,
    "run": run,
}
out = {}
for key, op, *args in json.loads(sys.argv[1]):
    try:
        out[key] = ops[op](*args)
    except OSError as e:
        out[key] = errno.errorcode.get(e.errno, str(e))
print(json.dumps(out))
`

/** An HTTP server on 127.0.0.1 answering `<name> <target>`, with the requests it saw. */
async function httpServer(name: string): Promise<{ server: Server; port: number; seen: string[] }> {
  const seen: string[] = []
  const server = createServer((request, response) => {
    seen.push(request.url ?? '')
    response.end(`${name} ${request.url}`)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { server, port: (server.address() as AddressInfo).port, seen }
}

/** A port nothing listens on now (the kernel picked it; freed again). */
async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** What the host reads from a connection to 127.0.0.1:`port`. */
function readFrom(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = ''
    const socket = connect(port, '127.0.0.1')
    socket.setEncoding('utf8').on('data', (chunk: string) => {
      text += chunk
    })
    socket.on('end', () => resolve(text))
    socket.on('error', reject)
  })
}

/** The tool's JSON, from the last line of its output. */
function answer(result: Finished): Record<string, unknown> {
  expect(result.stderr).toBe('')
  return JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '{}')
}

let proxy: Awaited<ReturnType<typeof httpServer>>
let other: Awaited<ReturnType<typeof httpServer>>
let published = 0
let unpublished = 0
let tool = ''
let toolDir = ''
/** A UDP server on 127.0.0.1 (a resolver, say): what reached it. */
let sink: UdpSink

beforeAll(async () => {
  proxy = await httpServer('proxy')
  other = await httpServer('other')
  published = await freePort()
  unpublished = await freePort()
  toolDir = tempDir('tv-landlock-net-')
  tool = writeTool(join(toolDir, 'net.py'), netSource)
  sink = await udpSink()
})
afterAll(async () => {
  await new Promise((resolve) => proxy.server.close(resolve))
  await new Promise((resolve) => other.server.close(resolve))
  await sink.close()
})

const list: NetAllowList = { allow: ['registry.example'], deny: [], publish: [] }
const allowList = (): SandboxPolicy =>
  policyFor(toolDir, tool, { net: { ...list, publish: [published] }, declared: ['net'] })
const route = (): NetworkRoute => ({ kind: 'port', port: proxy.port, publish: [published] })

/** Every wall at once: what the allow list lets through, and what it refuses. */
const checks = () => [
  ['curl', 'run', 'curl', '-sS', `http://127.0.0.1:${proxy.port}/curl`],
  ['proxied', 'run', 'curl', '-sS', '-x', `http://127.0.0.1:${proxy.port}`, 'http://registry.example/pkg'],
  ['python', 'connect', proxy.port],
  ['other', 'connect', other.port],
  ['curlOther', 'run', 'curl', '-sS', `http://127.0.0.1:${other.port}/curl`],
  ['udp', 'udp', sink.port],
  ['dns', 'run', 'getent', 'hosts', 'registry.example'],
  ['unix', 'unix'],
  ['netlink', 'netlink'],
  ['bindPublished', 'bind', published],
  ['bindOther', 'bind', unpublished],
  ['listen', 'listen'],
]

const refused = {
  curl: 'proxy /curl',
  proxied: 'proxy http://registry.example/pkg',
  python: 'proxy /python',
  other: 'EACCES',
  curlOther: 'exit 7',
  udp: 'EPERM',
  dns: 'exit 2',
  unix: 'EPERM',
  netlink: 'EPERM',
  bindPublished: 'ok',
  bindOther: 'EACCES',
  listen: 'ok',
}

/** Forgets what the servers saw before this test. */
async function fresh(): Promise<void> {
  proxy.seen.splice(0)
  other.seen.splice(0)
  await sink.drain()
}

interface Mode {
  readonly name: string
  readonly skip: string | undefined
  /** Starts the tool with `ops` under `policy` (and `network`, the launch's route). */
  start(policy: SandboxPolicy, ops: unknown[][], network?: NetworkRoute): ChildProcess
}

let userLauncher = ''
/** The ordinary user's spawns (each in a group of its own), killed after each test. */
const userChildren: ChildProcess[] = []

/** The mechanism: as root the tool runs as the run_as user; otherwise as this process's user. */
const throughMechanism: Mode = {
  name: isRoot ? 'toolvisor as root, the tool as its run_as user' : 'toolvisor as this user',
  skip: tcpRules ? undefined : needs,
  start(policy, ops, network) {
    const u = testUser()
    const runAs: RunAsTarget | undefined = u === undefined ? undefined : { user: u.user }
    const launch: Launch = { ...launchOf(tool, [JSON.stringify(ops)]), ...(network ? { network } : {}) }
    return start(mechanism.wrap(launch, policy, runAs))
  },
}

/**
 * The launcher run as an ordinary user (a copy it can run), with the arguments the mechanism builds
 * (grants by path) and the filter the mechanism picks, as toolvisor run by that user would.
 */
const asOrdinaryUser: Mode = {
  name: 'toolvisor as an ordinary user (the launcher in a user namespace)',
  skip: !tcpRules ? needs : !isRoot ? 'needs root to make the user' : undefined,
  start(policy, ops, network) {
    const u = testUser()!
    if (userLauncher === '') {
      userLauncher = join(tempDir(), 'landlock-launcher')
      copyFileSync(builtLauncher, userLauncher)
      chmodSync(userLauncher, 0o755)
    }
    const features = spawnSync(userLauncher, ['--features'], { encoding: 'utf8', uid: u.uid, gid: u.gid })
    const found = interpretFeatures(userLauncher, features)
    if (!found.available) throw new Error(`the launcher as ${u.user}: ${found.reason}`)
    const args = launcherArgs(policy, undefined, found, execMinimum(), network ? { network } : {})
    const net = typeof policy.net === 'object' ? 'stream' : policy.net
    const child = spawn(userLauncher, ['--seccomp-fd', '3', ...args, tool, JSON.stringify(ops)], {
      uid: u.uid,
      gid: u.gid,
      cwd: '/',
      env: { PATH: '/usr/bin:/bin' },
      detached: true,
      stdio: filterStdio('pipe', syscallFilter({ net, ipc: 'host' })),
    })
    child.stdin?.end()
    userChildren.push(child)
    return child
  },
}

async function killUserChildren(): Promise<void> {
  for (const child of userChildren.splice(0)) {
    if (child.exitCode !== null || child.signalCode !== null) continue
    const exit = exitOf(child)
    process.kill(-child.pid!, 'SIGKILL')
    await exit
  }
}

describe.each([throughMechanism, asOrdinaryUser])('$name', (mode) => {
  afterEach(killUserChildren)

  it.skipIf(mode.skip !== undefined)(
    "reaches the proxy's port only: curl, python and curl through it as a proxy; another port EACCES, UDP, unix and netlink EPERM, no DNS; bind only the published port",
    async () => {
      await fresh()
      const result = await finish(mode.start(allowList(), checks(), route()))
      expect(answer(result)).toEqual(refused)
      expect(result.code).toBe(0)
      // Nothing reached the other server, nor the UDP one.
      expect(other.seen).toEqual([])
      expect(await sink.drain()).toEqual([])
      expect(proxy.seen).toEqual(['/curl', 'http://registry.example/pkg', '/python'])
    },
  )

  it.skipIf(mode.skip !== undefined)(
    'for contrast, under net: host the same tool reaches the other port, sends UDP and binds any port',
    async () => {
      await fresh()
      const host = policyFor(toolDir, tool, { net: 'host' })
      const result = await finish(mode.start(host, checks()))
      expect(answer(result)).toMatchObject({
        python: 'proxy /python',
        other: 'other /python',
        curlOther: 'other /curl',
        udp: 'sent',
        bindOther: 'ok',
        unix: 'EPERM', // the allowlist refuses unix sockets to every tool
      })
      expect(other.seen).toEqual(['/python', '/curl'])
      expect(await sink.drain()).toEqual(['query from the tool'])
    },
  )

  it.skipIf(mode.skip !== undefined)(
    'a server the tool starts on the published port answers the host',
    async () => {
      const child = mode.start(allowList(), [['serve', 'serve', published]], route())
      const done = finish(child)
      await waitForOutput(child, 'listening')
      expect(await readFrom(published)).toBe('hello from the tool')
      const result = await done
      expect(answer(result)).toEqual({ serve: 'served' })
      expect(result.code).toBe(0)
    },
  )
})

/**
 * A resolver on 127.53.X.1:53 that answers every A query with 10.1.2.3 (and AAAA with no record),
 * with the queries it got; made by root (port 53).
 */
async function resolverAt(address: string): Promise<{ socket: Socket; queries: number[] }> {
  const socket = createSocket('udp4')
  const queries: number[] = []
  socket.on('message', (query, from) => {
    let end = 12 // the question's name: labels up to a zero byte
    while (end < query.length && query[end] !== 0) end += query[end]! + 1
    const type = query.readUInt16BE(end + 1)
    queries.push(type)
    const header = Buffer.from(query.subarray(0, 12))
    header.writeUInt16BE(0x8180, 2) // a response, recursion available, no error
    header.writeUInt16BE(1, 4)
    header.writeUInt16BE(type === 1 ? 1 : 0, 6)
    header.writeUInt32BE(0, 8)
    const record = type === 1 ? [0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 10, 1, 2, 3] : []
    socket.send(
      Buffer.concat([header, query.subarray(12, end + 5), Buffer.from(record)]),
      from.port,
      from.address,
    )
  })
  await new Promise<void>((resolve) => socket.bind(53, address, resolve))
  return { socket, queries }
}

describe.skipIf(!tcpRules || !isRoot)(
  "DNS, with a resolver the run's resolv.conf names (root: a mount namespace gives the run its own)",
  () => {
    const address = `127.53.${1 + Math.floor(Math.random() * 250)}.1`
    let resolver: Awaited<ReturnType<typeof resolverAt>>
    let resolvConf = ''
    beforeAll(async () => {
      resolver = await resolverAt(address)
      resolvConf = join(tempDir(), 'resolv.conf')
      writeFileSync(resolvConf, `nameserver ${address}\noptions timeout:1 attempts:1\n`)
    })
    afterAll(() => new Promise<void>((resolve) => resolver.socket.close(() => resolve())))

    /** getent under `policy`, in a mount namespace where /etc/resolv.conf names the resolver. */
    async function getent(policy: SandboxPolicy, network?: NetworkRoute) {
      const ops = [['dns', 'run', 'getent', 'hosts', 'registry.example']]
      const launch: Launch = { ...launchOf(tool, [JSON.stringify(ops)]), ...(network ? { network } : {}) }
      const wrapped = mechanism.wrap(launch, policy, { user: testUser()!.user })
      const script = 'mount --bind "$0" /etc/resolv.conf && exec "$@"'
      return answer(
        await finish(
          start({
            ...wrapped,
            file: '/usr/bin/unshare',
            args: [
              '--mount',
              '--propagation',
              'private',
              '/bin/sh',
              '-c',
              script,
              resolvConf,
              wrapped.file,
              ...wrapped.args,
            ],
          }),
        ),
      )
    }

    it('the allow list sends it no query at all (getent exit 2); net: host then resolves through it', async () => {
      resolver.queries.splice(0)
      expect(await getent(allowList(), route())).toEqual({ dns: 'exit 2' })
      expect(await getent(policyFor(toolDir, tool, { net: 'host' }))).toEqual({
        dns: '10.1.2.3        registry.example\n',
      })
      // The second run's AAAA and A queries, answered before it printed; none came before them.
      expect(resolver.queries.sort()).toEqual([1, 28])
    })
  },
)

describe('the mechanism and an allow list', () => {
  it('takes the port route', () => {
    expect(mechanism.netRoute).toBe('port')
  })

  it.skipIf(!tcpRules)(
    "qualifies it without a gate, and wraps it with the filter's stream variant and the port rules",
    async () => {
      const policy = allowList()
      expect(await mechanism.qualify(policy, undefined)).toEqual({ ok: true })
      const wrapped = mechanism.wrap({ ...launchOf(tool), network: route() }, policy, undefined)
      const at = wrapped.args.indexOf('--tcp-connect')
      expect(wrapped.args.slice(at, at + 4)).toEqual([
        '--tcp-connect',
        String(proxy.port),
        '--tcp-bind',
        String(published),
      ])
      expect(wrapped.args).not.toContain('--deny-tcp')
      const fd = Number(wrapped.args[wrapped.args.indexOf('--seccomp-fd') + 1])
      expect(wrapped.extraFds[fd - 3]).toEqual({
        kind: 'data',
        data: syscallFilter({ net: 'stream', ipc: 'host' }),
      })
    },
  )

  it.skipIf(!tcpRules)(
    'LANDLOCK_ERR_NETWORK: wrap refuses a launch without the proxy port (none, or a namespace route): not started',
    () => {
      const policy = allowList()
      for (const [network, has] of [
        [undefined, 'none'],
        [{ kind: 'namespace', port: 3128, publish: [] }, 'a namespace route'],
      ] as const) {
        const launch: Launch = { ...launchOf(tool), ...(network ? { network } : {}) }
        expect(() => mechanism.wrap(launch, policy, undefined)).toThrow(
          expect.objectContaining({
            code: 'LANDLOCK_ERR_NETWORK',
            message: `the network allow list of ${tool} needs the port of the runtime's proxy (a launch network route of kind port), and this launch has ${has}: not started`,
          }),
        )
      }
    },
  )

  it.skipIf(!tcpRules)('a published port outside 1..65535 is refused at qualify, naming net', async () => {
    const policy = policyFor(toolDir, tool, { net: { ...list, publish: [70000] }, declared: ['net'] })
    expect(await mechanism.qualify(policy, undefined)).toEqual({
      ok: false,
      field: 'net',
      reason: 'the Landlock launcher refused: --tcp-bind 70000: not a TCP port (1..65535)',
    })
  })

  it.skipIf(!tcpRules)(
    'below ABI 4 (--max-abi 3) it is refused naming net, wrap refuses it (LANDLOCK_ERR_REFUSED), describe() says so',
    async () => {
      const wrapper = writeTool(
        join(tempDir(), 'launcher'),
        `#!/bin/sh\nexec "${builtLauncher}" --max-abi 3 "$@"\n`,
      )
      const old = landlockMechanism({ launcher: wrapper })
      const reason =
        "a network allow list needs Landlock's TCP port rules (ABI >= 4) to keep connections to the proxy's port; this kernel has ABI 3"
      const fix =
        'use --sandbox bwrap (or --sandbox auto, which picks it for this tool), or declare net: host or none'
      expect(await old.qualify(allowList(), undefined)).toEqual({ ok: false, field: 'net', reason, fix })
      expect(() => old.wrap({ ...launchOf(tool), network: route() }, allowList(), undefined)).toThrow(
        expect.objectContaining({
          code: 'LANDLOCK_ERR_REFUSED',
          message: `cannot run ${tool} under Landlock: net: ${reason}; fix: ${fix}`,
        }),
      )
      const description = await old.describe()
      expect(description.gaps).toContain('net (an allow list): refused, it needs TCP port rules (ABI < 4)')
      expect(description.enforces.net).toContain(
        "an allow list: refused (it needs Landlock's TCP port rules, ABI >= 4); ",
      )
    },
  )

  it.skipIf(abi < 4)('describe() states what it enforces and the gaps of the port route', async () => {
    const description = await mechanism.describe()
    expect(description.enforces.net).toContain(
      "an allow list: the syscall filter allows socket() only for TCP (AF_INET and AF_INET6, SOCK_STREAM, protocol 0 or IPPROTO_TCP: no UDP, so no DNS, and no raw, netlink or unix socket), and Landlock's TCP rules allow connect only to the port number of toolvisor's proxy (which listens on the host's 127.0.0.1) and bind only to the published ports (EACCES on any other); ",
    )
    expect(description.gaps).toEqual(
      expect.arrayContaining([
        "net (an allow list): TCP connect is allowed to the proxy's port number on any address (Landlock rules are per port, not per address): a host elsewhere listening on that port number is reachable; UDP, DNS and every other socket are refused by the filter",
        "net (an allow list): no network namespace, so the tool's servers are on the host's network: a published port bound on 0.0.0.0 rather than 127.0.0.1 is reachable from other hosts, and listen() without bind() takes an ephemeral port on every address, which Landlock does not check",
      ]),
    )
  })
})
