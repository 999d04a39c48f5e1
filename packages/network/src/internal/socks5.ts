import type { Socket } from 'node:net'
import type { RefusalKind } from './admission.js'
import type { Client } from './client.js'
import { splice } from './splice.js'

/** SOCKS5 reply codes (RFC 1928 §6). */
const REPLY = {
  succeeded: 0x00,
  generalFailure: 0x01,
  notAllowed: 0x02,
  hostUnreachable: 0x04,
  connectionRefused: 0x05,
  commandNotSupported: 0x07,
  addressTypeNotSupported: 0x08,
} as const

const REPLY_OF: Record<RefusalKind, number> = {
  policy: REPLY.notAllowed,
  unresolved: REPLY.hostUnreachable,
  refused: REPLY.connectionRefused,
  timeout: REPLY.hostUnreachable,
}

const VERSION = 0x05
const NO_AUTHENTICATION = 0x00
const NO_ACCEPTABLE_METHOD = 0xff
const CONNECT = 0x01
const ATYP = { ipv4: 0x01, domain: 0x03, ipv6: 0x04 } as const

/**
 * A reply with the bound address 0.0.0.0:0: the program has no use for the proxy's own address
 * on the host, and is not told it.
 */
function reply(code: number): Buffer {
  return Buffer.from([VERSION, code, 0x00, ATYP.ipv4, 0, 0, 0, 0, 0, 0])
}

/**
 * Exactly `n` bytes from the socket, or undefined when it ended or closed first. Reads in paused
 * mode (`read(n)`), so that nothing past the handshake is taken off the socket: what a program
 * sends before the reply stays buffered (up to the stream's high-water mark, then TCP pushes
 * back) and goes to the target first.
 */
function take(socket: Socket, n: number): Promise<Buffer | undefined> {
  if (n === 0) return Promise.resolve(Buffer.alloc(0))
  return new Promise((resolve) => {
    const done = (chunk: Buffer | undefined) => {
      socket.off('readable', attempt)
      socket.off('end', gone)
      socket.off('close', gone)
      resolve(chunk)
    }
    const gone = () => done(undefined)
    const attempt = () => {
      if (socket.destroyed) return gone()
      const chunk = socket.read(n) as Buffer | null
      if (chunk !== null) done(chunk.length === n ? chunk : undefined)
    }
    socket.on('readable', attempt)
    socket.once('end', gone)
    socket.once('close', gone)
    attempt()
  })
}

/** The host a CONNECT request names: a name (resolved by the proxy) or an address, without brackets. */
async function readAddress(socket: Socket, atyp: number): Promise<string | undefined> {
  if (atyp === ATYP.ipv4) return (await take(socket, 4))?.join('.')
  if (atyp === ATYP.ipv6) {
    const bytes = await take(socket, 16)
    if (bytes === undefined) return undefined
    const groups: string[] = []
    for (let i = 0; i < 16; i += 2) groups.push(bytes.readUInt16BE(i).toString(16))
    return groups.join(':')
  }
  const length = await take(socket, 1)
  if (length === undefined) return undefined
  return (await take(socket, length[0]!))?.toString('utf8')
}

/**
 * Serves one SOCKS5 client (RFC 1928): the "no authentication" method only, the CONNECT command
 * only (BIND and UDP ASSOCIATE get "command not supported"), a target given as a name (resolved
 * here, never in the sandbox), IPv4 or IPv6. A refusal is its reply code, then the end.
 */
export async function serveSocks5(client: Client): Promise<void> {
  const { socket } = client
  const greeting = await take(socket, 2)
  const methods = greeting && (await take(socket, greeting[1]!))
  if (methods === undefined) return void socket.destroy()
  if (!methods.includes(NO_AUTHENTICATION)) return client.finish(Buffer.from([VERSION, NO_ACCEPTABLE_METHOD]))
  socket.write(Buffer.from([VERSION, NO_AUTHENTICATION]))
  const request = await take(socket, 4)
  if (request === undefined) return void socket.destroy()
  const [version, command, , atyp] = request
  if (version !== VERSION) return client.finish(reply(REPLY.generalFailure))
  if (command !== CONNECT) return client.finish(reply(REPLY.commandNotSupported))
  if (atyp !== ATYP.ipv4 && atyp !== ATYP.domain && atyp !== ATYP.ipv6) {
    return client.finish(reply(REPLY.addressTypeNotSupported))
  }
  const host = await readAddress(socket, atyp)
  const port = host === undefined ? undefined : await take(socket, 2)
  if (host === undefined || port === undefined) return void socket.destroy()
  client.requested()
  const admitted = await client.admit({ host, port: port.readUInt16BE(0) })
  if (admitted === undefined) return void socket.destroy()
  if (!admitted.ok) return client.finish(reply(REPLY_OF[admitted.kind]))
  socket.write(reply(REPLY.succeeded))
  splice(socket, admitted.socket)
}
