import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { mkdirSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { join } from 'node:path'
import type { Launch } from '@toolvisor/process-runtime'
import { eventually, type UdpSink, udpSink } from '@toolvisor/process-runtime/testing'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { bwrapMechanism } from '../src/index.js'
import { cleanup, installProbe, launchOf, policy, run, toolDir } from './helpers.js'

const bwrap = bwrapMechanism()
let root: string
let tool: string
let probe: string
let socketDir: string
let tcp: Server
let tcpPort: number
let tcpConnections = 0
let udp: UdpSink
let udpPort: number
let abstract: ChildProcess
let pathname: Server
const abstractName = `tvbw-abstract-${process.pid}`
const ABSTRACT_LISTENER = `
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind("\\0" + sys.argv[1])
s.listen()
print("ready", flush=True)
while True:
    s.accept()[0].close()
`

const listen = (server: Server, where: string | number) =>
  new Promise<void>((resolve) => server.listen(where as number, '127.0.0.1', resolve))

beforeAll(async () => {
  root = toolDir('tvbw-net-')
  tool = join(root, 'tool')
  mkdirSync(tool)
  probe = installProbe(tool)
  socketDir = join(root, 'sockets')
  mkdirSync(socketDir)
  tcp = createServer((socket) => {
    tcpConnections++
    socket.destroy()
  })
  await listen(tcp, 0)
  tcpPort = (tcp.address() as { port: number }).port
  udp = await udpSink()
  udpPort = udp.port
  // Node 20 pads abstract socket names to the whole sun_path; a python listener binds the plain name.
  abstract = spawn('/usr/bin/python3', ['-c', ABSTRACT_LISTENER, abstractName], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  await new Promise<void>((resolve) => abstract.stdout?.once('data', () => resolve()))
  pathname = createServer((socket) => socket.destroy())
  await new Promise<void>((resolve) => pathname.listen(join(socketDir, 's.sock'), resolve))
})
afterEach(async () => {
  expect(await cleanup()).toEqual([])
})
afterAll(async () => {
  await Promise.all([tcp, pathname].map((s) => new Promise((resolve) => s.close(resolve))))
  abstract.kill('SIGKILL')
  await udp.close()
  rmSync(root, { recursive: true, force: true })
})

const ops = () => [
  `tcp:127.0.0.1:${tcpPort}`,
  `udp:127.0.0.1:${udpPort}`,
  'udp:10.255.255.1:53',
  `unix:@${abstractName}`,
  'netdev',
  'socket:AF_INET',
  'socket:AF_INET6',
  'socket:AF_NETLINK:SOCK_RAW',
  'socket:AF_PACKET:SOCK_RAW',
  'socket:AF_VSOCK',
  'socket:AF_UNIX',
  'socketpair',
  'syscall:425',
]

describe('net: host', () => {
  it('reaches the host loopback listeners over TCP and UDP (the baseline the rows below differ from), never a unix socket', async () => {
    const before = tcpConnections
    const result = await run(bwrap.wrap(launchOf(probe, ops(), tool), policy(tool, probe), undefined), bwrap)
    const datagrams = await udp.drain()
    expect(result.code).toBe(0)
    expect(result.probe(`tcp:127.0.0.1:${tcpPort}`)).toMatchObject({ ok: true })
    // The host's abstract sockets share the host network namespace: the filter refuses AF_UNIX.
    expect(result.probe(`unix:@${abstractName}`)).toMatchObject({ ok: false, errno: 'EPERM' })
    expect(result.probe('socket:AF_UNIX')).toMatchObject({ ok: false, errno: 'EPERM' })
    expect(result.probe('socketpair')).toMatchObject({ ok: true })
    expect(result.probe('socket:AF_INET')).toMatchObject({ ok: true })
    // io_uring can open and connect sockets past the filter: refused whatever the net.
    expect(result.probe('syscall:425')).toMatchObject({ ok: false, errno: 'ENOSYS' })
    expect(await eventually(() => tcpConnections === before + 1)).toBe(true)
    expect(datagrams).toHaveLength(1)
  })
})

/** Whether this kernel runs x32 system calls at all (Debian: off unless booted with syscall.x32=y). */
const x32Enabled =
  spawnSync('/usr/bin/python3', ['-c', 'import ctypes; print(ctypes.CDLL(None).syscall(0x40000027))'], {
    encoding: 'utf8',
  }).stdout.trim() !== '-1'

describe('net: none', () => {
  it.skipIf(!x32Enabled)(
    'refuses x32 system calls (skipped: this kernel has x32 off, so nothing to refuse)',
    async () => {
      const launch = bwrap.wrap(
        launchOf(probe, ['syscall:0x40000027'], tool),
        policy(tool, probe, { net: 'none' }),
        undefined,
      )
      expect((await run(launch, bwrap)).probe('syscall:0x40000027')).toMatchObject({
        ok: false,
        errno: 'ENOSYS',
      })
    },
  )

  it('cuts TCP, UDP and host abstract sockets; leaves only lo; socket() of any family is EPERM, socketpair works', async () => {
    const before = tcpConnections
    const launch = bwrap.wrap(launchOf(probe, ops(), tool), policy(tool, probe, { net: 'none' }), undefined)
    const result = await run(launch, bwrap)
    const datagrams = await udp.drain()
    expect(result.code).toBe(0)
    expect(result.probe(`tcp:127.0.0.1:${tcpPort}`)).toMatchObject({ ok: false, errno: 'EPERM' })
    expect(result.probe(`udp:127.0.0.1:${udpPort}`)).toMatchObject({ ok: false, errno: 'EPERM' })
    expect(result.probe('udp:10.255.255.1:53')).toMatchObject({ ok: false, errno: 'EPERM' })
    expect(result.probe(`unix:@${abstractName}`)).toMatchObject({ ok: false, errno: 'EPERM' })
    expect(result.probe('netdev')).toMatchObject({ ok: true, value: ['lo'] })
    for (const family of [
      'AF_INET',
      'AF_INET6',
      'AF_NETLINK:SOCK_RAW',
      'AF_PACKET:SOCK_RAW',
      'AF_VSOCK',
      'AF_UNIX',
    ]) {
      expect(result.probe(`socket:${family}`)).toMatchObject({ ok: false, errno: 'EPERM' })
    }
    expect(result.probe('socketpair')).toMatchObject({ ok: true })
    expect(result.probe('syscall:425')).toMatchObject({ ok: false, errno: 'ENOSYS' })
    expect(tcpConnections).toBe(before)
    expect(datagrams).toEqual([])
  })

  it('still cuts the network without the filter: the namespace is a second, independent layer', async () => {
    const launch = bwrap.wrap(launchOf(probe, ops(), tool), policy(tool, probe, { net: 'none' }), undefined)
    const at = launch.args.indexOf('--seccomp')
    const unfiltered: Launch = { ...launch, args: launch.args.filter((_, i) => i !== at && i !== at + 1) }
    const before = tcpConnections
    const result = await run(unfiltered, bwrap)
    const datagrams = await udp.drain()
    expect(result.probe(`tcp:127.0.0.1:${tcpPort}`)).toMatchObject({ ok: false, errno: 'ECONNREFUSED' })
    expect(result.probe(`udp:127.0.0.1:${udpPort}`)).toMatchObject({ ok: true }) // sent to the sandbox's own lo
    expect(result.probe('udp:10.255.255.1:53')).toMatchObject({ ok: false, errno: 'ENETUNREACH' })
    expect(result.probe('netdev')).toMatchObject({ ok: true, value: ['lo'] })
    expect(result.probe('socket:AF_INET')).toMatchObject({ ok: true })
    expect(tcpConnections).toBe(before)
    expect(datagrams).toEqual([])
  })

  it('refuses a pathname unix socket inside a granted directory too (the gap this used to be)', async () => {
    const sock = join(socketDir, 's.sock')
    for (const net of ['none', 'host'] as const) {
      const launch = bwrap.wrap(
        launchOf(probe, [`unix:${sock}`], tool),
        policy(tool, probe, { net, read: [socketDir] }),
        undefined,
      )
      const result = await run(launch, bwrap)
      expect(result.probe(`unix:${sock}`)).toMatchObject({ op: `unix:${sock}`, ok: false, errno: 'EPERM' })
    }
  })
})
