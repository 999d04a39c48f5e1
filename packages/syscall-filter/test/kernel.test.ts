/**
 * The program as the kernel runs it: installed with PR_SET_SECCOMP on a real process (the
 * fixture does what bwrap and the Landlock launcher do), then real calls and real programs. No
 * sandbox around it, so each answer is the filter's own.
 */

import { spawn, spawnSync } from 'node:child_process'
import { createSocket } from 'node:dgram'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { type FilterOptions, syscallFilter } from '../src/index.js'

const fixture = fileURLToPath(new URL('./fixtures/under-filter.py', import.meta.url))
const place = mkdtempSync(join(tmpdir(), 'tv-syscall-filter-'))
afterAll(() => rmSync(place, { recursive: true, force: true }))

function programFile(options: FilterOptions): string {
  const file = join(place, `${options.net}-${options.ipc}.bpf`)
  writeFileSync(file, syscallFilter(options))
  return file
}

/** Runs `argv` under the program; a bound, never a wait (spawnSync's timeout). */
function under(options: FilterOptions, argv: string[]) {
  const run = spawnSync('/usr/bin/python3', [fixture, programFile(options), ...argv], {
    encoding: 'utf8',
    timeout: 20_000,
  })
  return { code: run.status, signal: run.signal, stdout: run.stdout, stderr: run.stderr }
}

/** The same, without blocking this process: for a run that talks to a server the test holds. */
function underAsync(options: FilterOptions, argv: string[]) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn('/usr/bin/python3', [fixture, programFile(options), ...argv], {
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 20_000,
    })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d
    })
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d
    })
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

const py = (code: string) => ['/usr/bin/python3', '-c', code]

/** An HTTP server on 127.0.0.1 that answers every request with its target, and its port. */
async function httpServer(): Promise<{ server: Server; port: number }> {
  const server = createServer((request, response) => response.end(`served ${request.url}`))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { server, port: (server.address() as AddressInfo).port }
}

const PROBE = `
import ctypes, errno, socket
libc = ctypes.CDLL(None, use_errno=True)
def show(name, f):
    try:
        f(); print(name, "ok")
    except OSError as e:
        print(name, errno.errorcode[e.errno])
def sc(name, *args):
    r = libc.syscall(*[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    print(name, "ok" if r >= 0 else errno.errorcode[ctypes.get_errno()])
show("socket unix", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM))
show("socket inet", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
show("socket netlink route", lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0))
show("socket netlink netfilter", lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 12))
show("socket packet", lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0))
show("socketpair dgram", lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM))
show("socketpair stream", lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC))
show("socketpair seqpacket", lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET))
sc("unshare user+net", 272, 0x50000000)
sc("unshare files", 272, 0x400)
sc("clone3", 435, None, 0)
sc("io_uring_setup", 425, 1, None)
print("shmget", "ok" if libc.shmget(0, 4096, 0o1600) >= 0 else errno.errorcode[ctypes.get_errno()])
sc("unknown 999", 999)
`

const x86 = process.arch === 'x64'

describe.skipIf(!x86)('the program under the real kernel (x86_64; python3)', () => {
  it('is accepted by the kernel in each variant and shows as one filter', () => {
    for (const net of ['none', 'host', 'stream'] as const) {
      for (const ipc of ['namespaced', 'host'] as const) {
        const run = under({ net, ipc }, ['/usr/bin/grep', '^Seccomp', '/proc/self/status'])
        expect(run).toMatchObject({ code: 0, stderr: '', stdout: 'Seccomp:\t2\nSeccomp_filters:\t1\n' })
      }
    }
  })

  it('answers each argument rule and family as the table says (net host, ipc host: Landlock)', () => {
    const run = under({ net: 'host', ipc: 'host' }, py(PROBE))
    expect(run.stderr).toBe('')
    expect(run.stdout).toBe(
      [
        'socket unix EPERM',
        'socket inet ok',
        'socket netlink route ok',
        'socket netlink netfilter EPERM',
        'socket packet EPERM',
        'socketpair dgram EPERM',
        'socketpair stream ok',
        'socketpair seqpacket ok',
        'unshare user+net EPERM',
        'unshare files ok',
        'clone3 ENOSYS',
        'io_uring_setup ENOSYS',
        'shmget EPERM',
        'unknown 999 ENOSYS',
        '',
      ].join('\n'),
    )
  })

  it('net none refuses every socket family, ipc namespaced allows SysV (bwrap)', () => {
    const run = under({ net: 'none', ipc: 'namespaced' }, py(PROBE))
    expect(
      run.stdout.split('\n').filter((line) => line.startsWith('socket') || line.startsWith('shm')),
    ).toEqual([
      'socket unix EPERM',
      'socket inet EPERM',
      'socket netlink route EPERM',
      'socket netlink netfilter EPERM',
      'socket packet EPERM',
      'socketpair dgram EPERM',
      'socketpair stream ok',
      'socketpair seqpacket ok',
      'shmget ok',
    ])
  })

  it('net stream leaves TCP only: IPv4 and IPv6 streams with any flags; UDP, raw, SCTP, MPTCP, unix, netlink EPERM', () => {
    const probe = `
import errno, socket
def show(name, *args):
    try:
        socket.socket(*args).close(); print(name, "ok")
    except OSError as e:
        print(name, errno.errorcode[e.errno])
show("tcp", socket.AF_INET, socket.SOCK_STREAM)
show("tcp6 nonblock cloexec", socket.AF_INET6, socket.SOCK_STREAM | socket.SOCK_NONBLOCK | socket.SOCK_CLOEXEC)
show("tcp IPPROTO_TCP", socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
show("udp", socket.AF_INET, socket.SOCK_DGRAM)
show("udp6", socket.AF_INET6, socket.SOCK_DGRAM)
show("raw", socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_TCP)
show("sctp stream", socket.AF_INET, socket.SOCK_STREAM, 132)
show("mptcp stream", socket.AF_INET, socket.SOCK_STREAM, 262)
show("unix stream", socket.AF_UNIX, socket.SOCK_STREAM)
show("netlink route", socket.AF_NETLINK, socket.SOCK_RAW, 0)
for name, kind in [("socketpair stream", socket.SOCK_STREAM), ("socketpair dgram", socket.SOCK_DGRAM)]:
    try:
        socket.socketpair(socket.AF_UNIX, kind); print(name, "ok")
    except OSError as e:
        print(name, errno.errorcode[e.errno])
`
    const run = under({ net: 'stream', ipc: 'host' }, py(probe))
    expect(run.stderr).toBe('')
    expect(run.stdout.split('\n')).toEqual([
      'tcp ok',
      'tcp6 nonblock cloexec ok',
      'tcp IPPROTO_TCP ok',
      'udp EPERM',
      'udp6 EPERM',
      'raw EPERM',
      'sctp stream EPERM',
      'mptcp stream EPERM',
      'unix stream EPERM',
      'netlink route EPERM',
      'socketpair stream ok',
      'socketpair dgram EPERM',
      '',
    ])
    // net host, for contrast: the same UDP socket is allowed there.
    expect(under({ net: 'host', ipc: 'host' }, py(probe)).stdout).toMatch(/^udp ok$/m)
  })

  it('net stream: curl and python reach a TCP server (directly and as an HTTP proxy); a UDP query never leaves', async () => {
    const { server, port } = await httpServer()
    const dns = createSocket('udp4')
    const queries: string[] = []
    dns.on('message', (message) => queries.push(message.toString()))
    await new Promise<void>((resolve) => dns.bind(0, '127.0.0.1', resolve))
    const dnsPort = dns.address().port
    try {
      const stream: FilterOptions = { net: 'stream', ipc: 'host' }
      const curl = await underAsync(stream, ['/usr/bin/curl', '-sS', `http://127.0.0.1:${port}/direct`])
      expect(curl).toMatchObject({ code: 0, stdout: 'served /direct' })
      // Through it as a proxy the name is never resolved here: the proxy gets it.
      const proxied = await underAsync(stream, [
        '/usr/bin/curl',
        '-sS',
        '-x',
        `http://127.0.0.1:${port}`,
        'http://registry.example/pkg',
      ])
      expect(proxied).toMatchObject({ code: 0, stdout: 'served http://registry.example/pkg' })
      const client = `
import errno, socket
s = socket.create_connection(("127.0.0.1", ${port}))
s.sendall(b"GET /python HTTP/1.0\\r\\n\\r\\n")
print(s.recv(4096).decode().split("\\r\\n\\r\\n")[1])
try:
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"query", ("127.0.0.1", ${dnsPort}))
    print("udp sent")
except OSError as e:
    print("udp", errno.errorcode[e.errno])
`
      expect(await underAsync(stream, py(client))).toMatchObject({
        code: 0,
        stdout: 'served /python\nudp EPERM\n',
      })
      // The same under net host sends it: the server above would have seen the query.
      expect(await underAsync({ net: 'host', ipc: 'host' }, py(client))).toMatchObject({
        stdout: 'served /python\nudp sent\n',
      })
      // Loopback datagrams are queued at sendto: the one that arrives is the net host run's alone.
      for (let waited = 0; queries.length === 0 && waited < 2_000; waited += 10) {
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
      expect(queries).toEqual(['query'])
    } finally {
      server.close()
      dns.close()
    }
  })

  it('real programs still run: bash pipes and subshells, python threads and subprocess, node workers and child_process', () => {
    const options: FilterOptions = { net: 'host', ipc: 'host' }
    expect(under(options, ['/bin/bash', '-c', 'echo a | tr a b; (exit 4); echo "sub $?"']).stdout).toBe(
      'b\nsub 4\n',
    )
    const threads =
      'import threading, subprocess\nt = threading.Thread(target=print, args=("thread",)); t.start(); t.join()\nprint(subprocess.run(["/bin/echo", "child"], capture_output=True, text=True).stdout, end="")'
    expect(under(options, py(threads))).toMatchObject({ code: 0, stdout: 'thread\nchild\n' })
    const worker =
      "const { Worker } = require('node:worker_threads'); const { execFileSync } = require('node:child_process');" +
      "new Worker('require(\"node:worker_threads\").parentPort.postMessage(7)', { eval: true }).on('message', function (m) {" +
      " console.log('worker', m, execFileSync('/bin/echo', ['child']).toString().trim()); this.terminate() })"
    expect(under(options, [process.execPath, '-e', worker])).toMatchObject({
      code: 0,
      stdout: 'worker 7 child\n',
    })
  })
})
