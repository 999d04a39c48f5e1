/** Clients of the proxy written by hand with Node: what curl and the others do, observable. */
import { type Agent, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http'
import type { Socket } from 'node:net'
import { dialTo, readAll, readBytes } from './helpers.js'

/** A request in absolute form to the proxy at `proxyPort`, as a client configured with a proxy sends it. */
export function viaProxy(
  proxyPort: number,
  url: string,
  options: { headers?: Record<string, string>; agent?: Agent; method?: string } = {},
): Promise<{ status: number; headers: IncomingHttpHeaders; body: string; reused: boolean }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port: proxyPort,
        path: url,
        method: options.method ?? 'GET',
        headers: { Host: new URL(url).host, ...options.headers },
        ...(options.agent ? { agent: options.agent } : {}),
      },
      (res: IncomingMessage) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.once('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString(),
            reused: req.reusedSocket,
          }),
        )
      },
    )
    req.once('error', reject)
    req.end()
  })
}

/** A CONNECT through the proxy: the status, and the tunnel when it is 200. */
export function connectVia(
  proxyPort: number,
  authority: string,
): Promise<{ status: number; headers: IncomingHttpHeaders; body: string; socket: Socket }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port: proxyPort, method: 'CONNECT', path: authority })
    // Node's client gives every answer to a CONNECT as 'connect'; a refusal's body follows the head.
    req.once('connect', (res: IncomingMessage, socket: Socket, head: Buffer) => {
      if (head.length > 0) socket.unshift(head)
      const status = res.statusCode ?? 0
      if (status === 200) return resolve({ status, headers: res.headers, body: '', socket })
      void readAll(socket).then((body) =>
        resolve({ status, headers: res.headers, body: body.toString(), socket }),
      )
    })
    req.once('error', reject)
    req.end()
  })
}

/** A SOCKS5 CONNECT by hand: the reply code, and the socket (a tunnel when the code is 0). */
export async function socksVia(
  proxyPort: number,
  target: { readonly domain: string } | { readonly ipv4: string },
  port: number,
): Promise<{ reply: number; socket: Socket }> {
  const socket = await dialTo(proxyPort)
  socket.write(Buffer.from([5, 1, 0]))
  const method = await readBytes(socket, 2)
  if (method[0] !== 5 || method[1] !== 0) throw new Error(`SOCKS5 method answer ${[...method]}`)
  const address =
    'domain' in target
      ? [3, target.domain.length, ...Buffer.from(target.domain)]
      : [1, ...target.ipv4.split('.').map(Number)]
  socket.write(Buffer.from([5, 1, 0, ...address, port >> 8, port & 255]))
  const reply = await readBytes(socket, 10)
  return { reply: reply[1]!, socket }
}
