/**
 * The proxy's side of the handoff (decision 0111), with this test speaking as the bridge of
 * `toolvisor-netns --handoff` over a gate's unix socket: the hello, the frame, the fence and the
 * REST bytes, the control lines and what each does to the gate's accounts, answers and slots.
 * The bridge's own side, with real processes, is handoff.test.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import type { Socket } from 'node:net'
import { constants, tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { createProxy, type Gate, type NetProxy, type ProxyOptions } from '../src/index.js'
import { dialTo, echoServer, openSockets, readAll, type Started, waitFor } from './helpers.js'

const HELLO = Buffer.from('\0TVNB1\r\n', 'latin1')
const baseline = openSockets()
const place = mkdtempSync(join(tmpdir(), 'tv-handoff-'))
const proxies: NetProxy[] = []
const servers: Started[] = []
let sockets = 0

afterEach(async () => {
  await Promise.all(proxies.splice(0).map((proxy) => proxy.close()))
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

afterAll(async () => {
  rmSync(place, { recursive: true, force: true })
  await waitFor(() => openSockets() <= baseline, 'every socket and listener to be gone')
})

/** A gate on a unix socket whose names lead to `addresses` (default 127.0.0.1). */
async function gateOf(options: ProxyOptions = {}, addresses = ['127.0.0.1']): Promise<Gate> {
  const proxy = createProxy({ resolve: async () => addresses, ...options })
  proxies.push(proxy)
  return proxy.open({
    id: 'handoff',
    rules: { allow: ['allowed.test'], deny: [] },
    listen: { unix: join(place, `gate-${sockets++}.sock`) },
  })
}

/** Everything `socket` sends, as it comes: `next(text)` waits until it holds `text` past what was taken. */
function reader(socket: Socket) {
  let got = Buffer.alloc(0)
  let wake: (() => void) | undefined
  let closed = false
  socket.on('data', (chunk: Buffer) => {
    got = Buffer.concat([got, chunk])
    wake?.()
  })
  socket.once('close', () => {
    closed = true
    wake?.()
  })
  socket.on('error', () => {})
  return {
    /** The bytes up to and with the next `end`, taken; undefined when the socket closed first. */
    async until(end: string): Promise<Buffer | undefined> {
      for (;;) {
        const at = got.indexOf(end)
        if (at >= 0) {
          const taken = got.subarray(0, at + end.length)
          got = got.subarray(at + end.length)
          return taken
        }
        if (closed) return undefined
        await new Promise<void>((resolve) => (wake = resolve))
      }
    },
    /** Exactly `n` bytes, taken. */
    async bytes(n: number): Promise<Buffer> {
      while (got.length < n && !closed) await new Promise<void>((resolve) => (wake = resolve))
      const taken = got.subarray(0, n)
      got = got.subarray(n)
      return taken
    },
    /** Everything left once the socket closed. */
    async all(): Promise<Buffer> {
      while (!closed) await new Promise<void>((resolve) => (wake = resolve))
      return got
    },
    closed: () => closed,
  }
}

/** A connection to `gate` as the bridge makes one, its hello first; the CONNECT for `target` sent. */
async function asBridge(gate: Gate, target: string, after = '') {
  const socket = await dialTo(gate.unixPath!)
  const connect = `CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n${after}`
  socket.write(HELLO)
  socket.write(connect)
  const from = reader(socket)
  const frame = (await from.until('\n'))?.toString('latin1') ?? ''
  const fields = / ([0-9a-f]{32}) \S+ (\d+) (\d+)\n$/.exec(frame)
  const nonce = fields?.[1] ?? ''
  const left = (await from.bytes(Number(fields?.[3]))).toString('latin1')
  /** The client's bytes the proxy says it read (CONNECT head included). */
  const taken = Number(fields?.[2])
  /** Client bytes the proxy had not read when it framed, then the fence; what the proxy sends back for them. */
  const fence = async (late = '') => {
    socket.write(`${late}\0FENCE ${nonce}\n`)
    if (late.length === 0) return ''
    const line = (await from.until('\n'))?.toString('latin1') ?? ''
    const size = Number(/^\0REST (\d+)\n$/.exec(line)?.[1])
    return (await from.bytes(size)).toString('latin1')
  }
  return { socket, from, frame, left, taken, sent: Buffer.byteLength(connect), fence }
}

describe('a CONNECT on a connection that began with the hello', () => {
  it('gets the frame first: the port, the connect timeout, a nonce, the addresses dial would try in order, what it read', async () => {
    const gate = await gateOf({ connectTimeoutMs: 2_500 }, ['127.0.0.1', '::1', '127.0.0.2'])
    const { socket, frame, sent } = await asBridge(gate, 'allowed.test:8443')
    expect(frame).toBe(`\0TVNH1 8443 2500 ${frame.slice(17, 49)} 127.0.0.1,::1,127.0.0.2 ${sent} 0\n`)
    expect(frame.slice(17, 49)).toMatch(/^[0-9a-f]{32}$/)
    socket.destroy()
  })

  it('the client bytes past the CONNECT head: those read with it in the frame, those read after it (before the fence) as REST', async () => {
    const gate = await gateOf()
    const early = 'early \0FENCE not-the-nonce\n'
    const { socket, left, taken, sent, fence } = await asBridge(gate, 'allowed.test:443', early)
    expect(left).toBe(early)
    expect(taken).toBe(sent)
    // Bytes that reached the proxy after it framed are the client's too, until the fence.
    expect(await fence('late')).toBe('late')
    socket.destroy()
  })

  it('OK counts the connection, BYTES the bytes so far, DONE all of them; the channel holds its slot', async () => {
    const gate = await gateOf({ maxConnections: 1 })
    const first = await asBridge(gate, 'allowed.test:443')
    expect(await first.fence()).toBe('')
    first.socket.write('\0OK\n\0BYTES 10 3\n')
    await waitFor(() => gate.report().bytesIn === 10, 'the bytes so far')
    expect(gate.report()).toMatchObject({
      connections: 1,
      bytesIn: 10,
      bytesOut: 3,
      byName: { 'allowed.test:443': { connections: 1, bytesIn: 10, bytesOut: 3 } },
    })
    // One slot, held by the tunnel: another is refused until its channel closes.
    const second = await dialTo(gate.unixPath!)
    second.write(Buffer.concat([HELLO, Buffer.from('CONNECT allowed.test:443 HTTP/1.1\r\n\r\n')]))
    expect((await readAll(second)).toString()).toMatch(
      /^HTTP\/1\.1 403 Forbidden\r\n[\s\S]*too many connections \(1\)\n$/,
    )
    first.socket.end('\0DONE 25 7\n')
    expect((await first.from.all()).length).toBe(0) // the proxy closes its side in turn
    expect(gate.report()).toMatchObject({ connections: 1, bytesIn: 25, bytesOut: 7 })
    const third = await asBridge(gate, 'allowed.test:443')
    expect(third.frame).toMatch(/^\0TVNH1 443 /)
    third.socket.destroy()
  })

  it('FAIL: the denial recorded as a dial would record it, the answer written for the client (502, 504)', async () => {
    const gate = await gateOf()
    for (const [errno, answer, reason] of [
      [constants.errno.ECONNREFUSED, 'HTTP/1.1 502 Bad Gateway', 'connection refused by the target'],
      [constants.errno.ETIMEDOUT, 'HTTP/1.1 504 Gateway Timeout', 'timed out connecting'],
    ] as const) {
      const { socket, from, fence } = await asBridge(gate, 'allowed.test:443')
      await fence()
      // After FAIL the bridge carries the client's bytes again: the proxy reads them as nothing.
      socket.write(`\0FAIL ${errno}\nclient bytes`)
      socket.end()
      const text = (await from.all()).toString()
      expect(text.startsWith(`${answer}\r\n`)).toBe(true)
      expect(text.endsWith(`\r\n\r\ntoolvisor: blocked allowed.test:443, ${reason}\n`)).toBe(true)
      expect(text).toContain(`X-Toolvisor-Denied: ${reason}\r\n`)
      expect(gate.report().denied.at(-1)).toMatchObject({ host: 'allowed.test', port: 443, reason })
    }
    expect(gate.report()).toMatchObject({ connections: 0, deniedCount: 2 })
  })

  it('a line the bridge never sends there ends the connection, and nothing is counted', async () => {
    const gate = await gateOf()
    for (const line of ['\0DONE 1 1\n', '\0BYTES 1 1\n', 'OK\n', `\0${'x'.repeat(100)}`]) {
      const { socket, from, fence } = await asBridge(gate, 'allowed.test:443')
      await fence()
      socket.write(line)
      expect((await from.all()).length).toBe(0)
    }
    expect(gate.report()).toMatchObject({ connections: 0, bytesIn: 0, deniedCount: 0 })
  })

  it('closing the gate closes the control channel (which ends the tunnel at the bridge)', async () => {
    const gate = await gateOf()
    const { socket, from, fence } = await asBridge(gate, 'allowed.test:443')
    await fence()
    socket.write('\0OK\n')
    await waitFor(() => gate.report().connections === 1, 'the tunnel counted')
    await gate.close()
    expect((await from.all()).length).toBe(0)
    expect(from.closed()).toBe(true)
  })

  it('a refusal is the answer as without the hello (403), never a frame', async () => {
    const gate = await gateOf()
    const socket = await dialTo(gate.unixPath!)
    socket.write(Buffer.concat([HELLO, Buffer.from('CONNECT denied.test:443 HTTP/1.1\r\n\r\n')]))
    expect((await readAll(socket)).toString()).toMatch(
      /^HTTP\/1\.1 403 Forbidden\r\n[\s\S]*toolvisor: blocked denied\.test:443, not in the allow list\n$/,
    )
  })

  it('a hello that comes in pieces is the hello all the same', async () => {
    const gate = await gateOf()
    const socket = await dialTo(gate.unixPath!)
    socket.write(HELLO.subarray(0, 3))
    await new Promise((resolve) => setImmediate(resolve))
    socket.write(HELLO.subarray(3))
    await new Promise((resolve) => setImmediate(resolve))
    socket.write('CONNECT allowed.test:443 HTTP/1.1\r\n\r\n')
    expect((await reader(socket).until('\n'))?.toString('latin1')).toMatch(/^\0TVNH1 443 /)
    socket.destroy()
  })
})

describe('a connection without the hello', () => {
  it('on a unix gate: the proxy dials and relays the tunnel itself, its bytes counted live', async () => {
    const echo = await echoServer()
    servers.push(echo)
    const gate = await gateOf()
    const socket = await dialTo(gate.unixPath!)
    const from = reader(socket)
    socket.write(`CONNECT allowed.test:${echo.port} HTTP/1.1\r\n\r\n`)
    expect((await from.until('\r\n\r\n'))?.toString()).toBe('HTTP/1.1 200 Connection Established\r\n\r\n')
    socket.write('ping')
    expect((await from.bytes(4)).toString()).toBe('ping')
    expect(gate.report()).toMatchObject({ connections: 1, bytesIn: 4, bytesOut: 4 })
    socket.destroy()
  })

  it('on a TCP gate, the hello is not taken: a program that sends it gets 400', async () => {
    const proxy = createProxy({ resolve: async () => ['127.0.0.1'] })
    proxies.push(proxy)
    const gate = await proxy.open({
      id: 'tcp',
      rules: { allow: ['allowed.test'], deny: [] },
      listen: { tcp: true },
    })
    const socket = await dialTo(gate.tcpPort!)
    socket.write(Buffer.concat([HELLO, Buffer.from('CONNECT allowed.test:443 HTTP/1.1\r\n\r\n')]))
    const answer = (await readAll(socket)).toString()
    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/)
    expect(answer).toContain('toolvisor: not an HTTP or SOCKS5 request')
    expect(gate.report()).toMatchObject({ connections: 0, deniedCount: 0 })
  })
})
