/**
 * Real servers for the bash network tests (decision 0112): an HTTP site that counts the requests
 * it answered, and an npm registry of one tiny package (a packument and the tarball `npm pack`
 * made), each on 127.0.0.1 at a port the system picks. The proxy reaches them by the names the
 * test's resolve seam maps to 127.0.0.1. Each is closed after the test, its connections too.
 */
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { join } from 'node:path'
import { afterEach } from 'vitest'
import { tempDir } from './helpers.js'

const closers: Array<() => Promise<void>> = []
afterEach(async () => {
  while (closers.length > 0) await closers.pop()!()
})

/** A server a test started, and the requests it answered (`METHOD path`, in order). */
export interface Served {
  readonly port: number
  readonly requests: string[]
}

/** An HTTP server on 127.0.0.1 answering with `handler`; closed after the test. */
async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Served> {
  const requests: string[] = []
  const sockets = new Set<Socket>()
  const server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`)
    handler(req, res)
  })
  server.on('connection', (socket: Socket) => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  closers.push(
    () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  )
  return { port: address.port, requests }
}

/** A site that answers every request with `hello from the host`. */
export function site(): Promise<Served> {
  return serve((_req, res) => res.end('hello from the host\n'))
}

/** The package the registry serves, and the one file it installs. */
export const TINY = { name: 'tiny-pkg', version: '1.0.0', file: 'index.js', text: 'module.exports = 42\n' }

/**
 * An npm registry of one package, `tiny-pkg@1.0.0` (one file), for clients that reach it as
 * `http://HOST:PORT/` (`host`: the name the proxy resolves): its packument and its tarball, made
 * with `npm pack` here, with the integrity npm checks.
 */
export async function registry(host: string): Promise<Served> {
  const source = tempDir('tv-bash-pkg-')
  writeFileSync(
    join(source, 'package.json'),
    JSON.stringify({ name: TINY.name, version: TINY.version, main: TINY.file }),
  )
  writeFileSync(join(source, TINY.file), TINY.text)
  const packed = join(source, 'packed')
  mkdirSync(packed)
  execFileSync('npm', ['pack', '--silent', '--pack-destination', packed], {
    cwd: source,
    env: { ...process.env, npm_config_cache: join(source, 'cache'), npm_config_update_notifier: 'false' },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  const tarball = readFileSync(join(packed, `${TINY.name}-${TINY.version}.tgz`))
  const path = `/${TINY.name}/-/${TINY.name}-${TINY.version}.tgz`
  let port = 0
  const served = await serve((req, res) => {
    if (req.url === path) {
      res.setHeader('content-type', 'application/octet-stream')
      res.end(tarball)
      return
    }
    if (req.url !== `/${TINY.name}`) {
      res.statusCode = 404
      res.end('{}')
      return
    }
    res.setHeader('content-type', 'application/json')
    res.end(JSON.stringify(packument(`http://${host}:${port}${path}`, tarball)))
  })
  port = served.port
  return served
}

/** The registry's document of `tiny-pkg`: one version, its tarball and the integrity npm checks. */
function packument(tarball: string, bytes: Buffer) {
  return {
    name: TINY.name,
    'dist-tags': { latest: TINY.version },
    versions: {
      [TINY.version]: {
        name: TINY.name,
        version: TINY.version,
        main: TINY.file,
        dist: {
          tarball,
          shasum: createHash('sha1').update(bytes).digest('hex'),
          integrity: `sha512-${createHash('sha512').update(bytes).digest('base64')}`,
        },
      },
    },
  }
}
