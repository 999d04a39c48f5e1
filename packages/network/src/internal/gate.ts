import { chmod, rm } from 'node:fs/promises'
import type { Server as HttpServer } from 'node:http'
import { createServer, type Server, type Socket } from 'node:net'
import { NetworkError } from '../errors.js'
import type { Denial, Gate, GateReport, GateRequest } from '../proxy.js'
import { Admission } from './admission.js'
import { sharedAsk } from './asking.js'
import { Client } from './client.js'
import { HELLO } from './handoff.js'
import { httpFront } from './http-front.js'
import { Ledger } from './ledger.js'
import { RuleSet } from './rule-set.js'
import { serveSocks5 } from './socks5.js'

/** What every gate of a proxy shares: the proxy's options, with their defaults. */
export interface GateSettings {
  readonly resolve: (host: string) => Promise<readonly string[]>
  readonly maxConnections: number
  readonly connectTimeoutMs: number
  readonly refuseOwnListeners: boolean
}

/** How long a closing gate waits for its peers to hang up before it cuts them. */
const CLOSE_GRACE_MS = 250

/** The first byte of every SOCKS5 greeting; no HTTP request starts with it. */
const SOCKS5 = 0x05

// A socket's errors end it and 'close' follows, which is what every part listens to; unheard,
// an error would end the process.
const ignore = () => {}

type Where = { readonly unixPath: string } | { readonly tcpPort: number }

function checkListen(request: GateRequest): void {
  const listen = request.listen as { unix?: unknown; tcp?: unknown }
  const unix = typeof listen.unix === 'string' && listen.unix !== ''
  const tcp = listen.tcp === true
  if (unix !== tcp) return
  throw new NetworkError(
    'NET_ERR_OPTIONS',
    `gate ${request.id}: listen is ${JSON.stringify(request.listen)}; pass { unix: "/path/to/socket" } or { tcp: true }`,
  )
}

/** Listens on `request.listen`; a unix socket is made mode 0600 before anything is accepted on it. */
async function listen(server: Server, request: GateRequest): Promise<Where> {
  const listen = request.listen
  const where = 'unix' in listen ? listen.unix : '127.0.0.1, a free port'
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      const options = 'unix' in listen ? { path: listen.unix } : { host: '127.0.0.1', port: 0 }
      server.listen(options, () => {
        server.off('error', reject)
        resolve()
      })
    })
    server.on('error', ignore)
    if (!('unix' in listen)) {
      const address = server.address()
      return { tcpPort: typeof address === 'object' && address !== null ? address.port : 0 }
    }
    await chmod(listen.unix, 0o600)
    return { unixPath: listen.unix }
  } catch (error) {
    server.close()
    const fix =
      'unix' in listen
        ? 'remove a stale socket there, or give a path in an existing directory'
        : 'check the loopback interface'
    throw new NetworkError(
      'NET_ERR_LISTEN',
      `gate ${request.id}: cannot listen on ${where}: ${(error as Error).message}; ${fix}`,
      { cause: error },
    )
  }
}

/**
 * One launch's gate: a listener of its own (so that the proxy knows whose connection it is), its
 * rules, its accounts, and every socket it opened, ended at close. Each connection is told apart
 * by its first byte: SOCKS5, or else HTTP (CONNECT and plain requests) through a `node:http`
 * server that never listens.
 */
export class ListeningGate implements Gate {
  declare readonly unixPath?: string
  declare readonly tcpPort?: number
  readonly #server: Server
  readonly #front: HttpServer
  readonly #ledger: Ledger
  readonly #admission: Admission
  readonly #maxClients: number
  readonly #clients = new Map<Socket, Client>()
  /** Every socket of the gate, clients' and targets', until it closes. */
  readonly #sockets = new Set<Socket>()
  readonly #onClosed: () => void
  #closing: Promise<void> | undefined
  #drained: (() => void) | undefined

  /** Opens a gate: checks the request, listens, and takes connections from then on. */
  static async open(
    request: GateRequest,
    settings: GateSettings,
    onClosed: () => void,
  ): Promise<ListeningGate> {
    checkListen(request)
    const rules = RuleSet.parse(request.rules)
    if (Array.isArray(rules)) {
      throw new NetworkError(
        'NET_ERR_RULES',
        `gate ${request.id}: ${rules.length === 1 ? 'an entry is' : 'entries are'} not valid: ${rules.join('; ')}`,
      )
    }
    let gate: ListeningGate | undefined
    const server = createServer({ allowHalfOpen: true }, (socket) => {
      if (gate === undefined) return void socket.destroy()
      gate.#accept(socket)
    })
    const where = await listen(server, request)
    gate = new ListeningGate({ request, settings, rules, server, where, onClosed })
    return gate
  }

  private constructor(parts: {
    readonly request: GateRequest
    readonly settings: GateSettings
    readonly rules: RuleSet
    readonly server: Server
    readonly where: Where
    readonly onClosed: () => void
  }) {
    const { request, settings } = parts
    if ('unixPath' in parts.where) this.unixPath = parts.where.unixPath
    else this.tcpPort = parts.where.tcpPort
    this.#server = parts.server
    this.#onClosed = parts.onClosed
    this.#ledger = new Ledger()
    this.#maxClients = 2 * settings.maxConnections
    this.#admission = new Admission({
      rules: parts.rules,
      ledger: this.#ledger,
      resolve: settings.resolve,
      ...(request.ask === undefined ? {} : { ask: sharedAsk(request.ask) }),
      maxConnections: settings.maxConnections,
      connectTimeoutMs: settings.connectTimeoutMs,
      refuseOwnListeners: settings.refuseOwnListeners,
      track: (socket) => this.#track(socket),
    })
    this.#front = httpFront({ clientOf: (socket) => this.#clients.get(socket) })
  }

  report(): GateReport {
    return this.#ledger.report()
  }

  onDenied(listener: (denial: Denial) => void): () => void {
    return this.#ledger.onDenied(listener)
  }

  close(): Promise<void> {
    this.#closing ??= this.#shut()
    return this.#closing
  }

  async #shut(): Promise<void> {
    const stopped = new Promise<void>((resolve) => this.#server.close(() => resolve()))
    const drained =
      this.#sockets.size === 0 ? undefined : new Promise<void>((resolve) => (this.#drained = resolve))
    // Ended, not destroyed at once: what the peer sent before it went (a bridge's last BYTES or
    // DONE line, written as its launch ended) is still read into the accounts. A peer that does
    // not hang up within the grace is cut.
    for (const socket of this.#sockets) socket.end()
    const cut = setTimeout(() => {
      for (const socket of this.#sockets) socket.destroy()
    }, CLOSE_GRACE_MS)
    await Promise.all([stopped, drained])
    clearTimeout(cut)
    if (this.unixPath !== undefined) await rm(this.unixPath, { force: true })
    this.#onClosed()
  }

  #track(socket: Socket): void {
    socket.on('error', ignore)
    if (this.#closing !== undefined) return void socket.destroy()
    this.#sockets.add(socket)
    socket.once('close', () => {
      this.#sockets.delete(socket)
      if (this.#sockets.size === 0) this.#drained?.()
    })
  }

  #accept(socket: Socket): void {
    this.#track(socket)
    // Beyond twice the limit a connection is not even read: a program opening sockets in a loop
    // costs the proxy a file descriptor each for an instant, never a parser.
    if (this.#clients.size >= this.#maxClients) return void socket.destroy()
    socket.setNoDelay(true)
    const client = new Client(socket, this.#admission)
    this.#clients.set(socket, client)
    socket.once('close', () => this.#clients.delete(socket))
    this.#dispatch(client, Buffer.alloc(0))
  }

  /**
   * Reads the connection's first bytes: on a unix socket, the hello of the bridge of
   * `toolvisor-netns --handoff` (stripped; the connection may then be handed to the bridge), then
   * the client's first byte, which tells the protocol. A TCP gate takes no hello: what reaches
   * it there comes from a program, and goes to the protocols as it is (a 400).
   */
  #dispatch(client: Client, seen: Buffer): void {
    const { socket } = client
    socket.once('data', (chunk: Buffer) => {
      let bytes = seen.length === 0 ? chunk : Buffer.concat([seen, chunk])
      if (this.unixPath !== undefined && !client.fromBridge) {
        const n = Math.min(bytes.length, HELLO.length)
        if (bytes.subarray(0, n).equals(HELLO.subarray(0, n))) {
          if (n < HELLO.length) return this.#dispatch(client, bytes)
          client.fromBridge = true
          bytes = bytes.subarray(HELLO.length)
          if (bytes.length === 0) return this.#dispatch(client, bytes)
        }
      }
      // Put the first bytes back for whichever protocol reads them. The HTTP parser reads the
      // socket's handle directly from here on; the bytes put back reach it first, as the resume
      // flushes them on the next tick, before the loop delivers anything newer.
      socket.pause()
      socket.unshift(bytes)
      if (bytes[0] === SOCKS5) return void serveSocks5(client)
      this.#front.emit('connection', socket)
      socket.resume()
    })
  }
}
