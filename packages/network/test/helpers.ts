/**
 * Real servers and real clients for the proxy's tests: servers on 127.0.0.1 at ports the system
 * picks, clients run as processes with an environment free of any proxy variable of the host.
 */
import { execFile, spawn, spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http'
import { connect, createServer, type Socket } from 'node:net'
import { join } from 'node:path'

/** A server a test started; `close` ends it and every connection to it. */
export interface Started {
  readonly port: number
  close(): Promise<void>
}

async function listening(server: Server | ReturnType<typeof createServer>): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  return address.port
}

function closer(server: Server | ReturnType<typeof createServer>, sockets: Set<Socket>): () => Promise<void> {
  return () =>
    new Promise((resolve) => {
      for (const socket of sockets) socket.destroy()
      server.close(() => resolve())
    })
}

function tracked(server: Server | ReturnType<typeof createServer>): Set<Socket> {
  const sockets = new Set<Socket>()
  server.on('connection', (socket: Socket) => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
  })
  return sockets
}

/** An HTTP server on 127.0.0.1 answering with `handler`. */
export async function httpServer(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<Started & { readonly server: Server }> {
  const server = createHttpServer(handler)
  const sockets = tracked(server)
  const port = await listening(server)
  return { port, server, close: closer(server, sockets) }
}

/** A TCP server on 127.0.0.1 that sends back what it gets, and ends when its client ends. */
export async function echoServer(): Promise<Started> {
  const server = createServer({ allowHalfOpen: true }, (socket) => {
    socket.on('error', () => {})
    socket.pipe(socket)
  })
  const sockets = tracked(server)
  const port = await listening(server)
  return { port, close: closer(server, sockets) }
}

/** A TCP server on 127.0.0.1 that gives each connection to `handler`. */
export async function tcpServer(handler: (socket: Socket) => void): Promise<Started> {
  const server = createServer({ allowHalfOpen: true }, (socket) => {
    socket.on('error', () => {})
    handler(socket)
  })
  const sockets = tracked(server)
  const port = await listening(server)
  return { port, close: closer(server, sockets) }
}

/** A port nothing listens on (just closed). */
export async function closedPort(): Promise<number> {
  const server = createServer()
  const port = await listening(server)
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** The host's environment without any proxy variable, so that a client goes only where it is told. */
export function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !/_proxy$/i.test(key)) env[key] = value
  }
  return { ...env, ...extra }
}

/** What a finished process did. */
export interface Ran {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs `file` to its end (bounded at 20 s, never a wait). */
export function run(file: string, args: readonly string[], env = cleanEnv()): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(file, args, { env, timeout: 20_000, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null
      resolve({ code, stdout, stderr })
    })
  })
}

/** Waits until `condition` holds, checking every 10 ms; fails after `ms` with `what`. */
export async function waitFor(condition: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms
  while (!condition()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

/** Connects to a TCP port on 127.0.0.1, or a unix socket path. */
export function dialTo(where: number | string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = typeof where === 'number' ? connect(where, '127.0.0.1') : connect({ path: where })
    socket.once('connect', () => resolve(socket))
    socket.once('error', reject)
  })
}

/** Everything `socket` sends until it ends or closes. */
export function readAll(socket: Socket): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    socket.once('close', () => resolve(Buffer.concat(chunks)))
    socket.on('error', () => {})
  })
}

/** The next `n` bytes `socket` sends (or fewer, when it ends first). */
export function readBytes(socket: Socket, n: number): Promise<Buffer> {
  return new Promise((resolve) => {
    let got = Buffer.alloc(0)
    const onData = (chunk: Buffer) => {
      got = Buffer.concat([got, chunk])
      if (got.length >= n) finish()
    }
    const finish = () => {
      socket.off('data', onData)
      socket.off('close', finish)
      if (got.length > n) socket.unshift(got.subarray(n))
      resolve(got.subarray(0, n))
    }
    socket.on('data', onData)
    socket.once('close', finish)
  })
}

/** The kinds of handles this process holds that are sockets or servers, counted. */
export function openSockets(): number {
  return process
    .getActiveResourcesInfo()
    .filter(
      (kind) =>
        kind === 'TCPSocketWrap' ||
        kind === 'TCPServerWrap' ||
        kind === 'PipeWrap' ||
        kind === 'PipeServerWrap',
    ).length
}

/** A fixture server in a process of its own. */
export interface ChildServer extends Started {
  readonly pid: number
}

/**
 * Starts `file` (a fixture that prints its port on its first line and stops when its stdin
 * closes); `close` closes its stdin, waits for its exit, and checks that it is gone.
 */
export async function childServer(command: string, args: readonly string[]): Promise<ChildServer> {
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const port = await new Promise<number>((resolve, reject) => {
    let text = ''
    child.stdout.on('data', (chunk: Buffer) => {
      text += chunk.toString()
      if (text.includes('\n')) resolve(Number(text.split('\n')[0]))
    })
    child.once('exit', (code) =>
      reject(new Error(`${command} ${args.join(' ')} exited ${code} before its port`)),
    )
  })
  return {
    port,
    pid: child.pid!,
    async close() {
      child.stdin.end()
      const bound = setTimeout(() => child.kill('SIGKILL'), 5_000)
      await exited
      clearTimeout(bound)
      child.stdout.destroy()
    },
  }
}

/** Whether a process `pid` still exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Where git's own programs are (`git --exec-path`). */
const backend = spawnSync('git', ['--exec-path'], { encoding: 'utf8' }).stdout.trim()
/** Whether this host has git's HTTP backend (`git http-backend`). */
export const hasGitBackend = existsSync(join(backend, 'git-http-backend'))

/** The status a CGI program gives in its `Status:` header, and its other headers. */
function cgiHead(text: string): { status: number; headers: [string, string][] } {
  let status = 200
  const headers: [string, string][] = []
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(':')
    if (colon < 0) continue
    const name = line.slice(0, colon).trim()
    const value = line.slice(colon + 1).trim()
    if (name.toLowerCase() === 'status') status = Number(value.split(' ')[0])
    else headers.push([name, value])
  }
  return { status, headers }
}

/**
 * An HTTP server on 127.0.0.1 serving the repositories under `root` with `git http-backend` as a
 * CGI (smart HTTP, clone and fetch); `children` holds the backends still running.
 */
export async function gitHttpBackend(root: string): Promise<{ server: Started; children: Set<number> }> {
  const children = new Set<number>()
  const server = await httpServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://git.test')
    const child = spawn(join(backend, 'git-http-backend'), [], {
      env: {
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: '1',
        PATH_INFO: url.pathname,
        QUERY_STRING: url.search.slice(1),
        REQUEST_METHOD: req.method ?? 'GET',
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        REMOTE_ADDR: '127.0.0.1',
        ...(req.headers['content-length'] ? { CONTENT_LENGTH: req.headers['content-length'] } : {}),
        ...(req.headers['content-encoding']
          ? { HTTP_CONTENT_ENCODING: req.headers['content-encoding'] }
          : {}),
        ...(req.headers['git-protocol'] ? { GIT_PROTOCOL: String(req.headers['git-protocol']) } : {}),
      },
      stdio: ['pipe', 'pipe', 'inherit'],
    })
    children.add(child.pid!)
    child.once('exit', () => children.delete(child.pid!))
    req.pipe(child.stdin)
    let head = Buffer.alloc(0)
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk])
      const end = head.indexOf('\r\n\r\n') >= 0 ? head.indexOf('\r\n\r\n') + 4 : head.indexOf('\n\n') + 2
      if (end < 2) return
      child.stdout.off('data', onData)
      const { status, headers } = cgiHead(head.subarray(0, end).toString())
      res.writeHead(status, headers.flat())
      res.write(head.subarray(end))
      child.stdout.pipe(res)
    }
    child.stdout.on('data', onData)
  })
  return { server, children }
}
