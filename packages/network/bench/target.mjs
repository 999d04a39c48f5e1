// The bench's target, in a process of its own so that its work is not the proxy's: an HTTP
// server answering GET /bytes/N with N bytes (1 MiB pieces, with backpressure) and a TCP echo
// server. Prints "HTTP_PORT ECHO_PORT", and stops when its stdin closes.
import { createServer as createHttpServer } from 'node:http'
import { createServer } from 'node:net'

const PIECE = Buffer.alloc(1024 * 1024, 0x61)

const http = createHttpServer((req, res) => {
  const total = Number(/^\/bytes\/(\d+)$/.exec(req.url ?? '')?.[1] ?? 0)
  res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': total })
  let sent = 0
  const more = () => {
    while (sent < total) {
      const size = Math.min(PIECE.length, total - sent)
      sent += size
      if (!res.write(size === PIECE.length ? PIECE : PIECE.subarray(0, size)))
        return void res.once('drain', more)
    }
    res.end()
  }
  more()
})
const echo = createServer({ noDelay: true }, (socket) => {
  socket.on('error', () => {})
  socket.pipe(socket)
})
const listening = (server) =>
  new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)))
const [httpPort, echoPort] = await Promise.all([listening(http), listening(echo)])
process.stdout.write(`${httpPort} ${echoPort}\n`)
process.stdin.on('data', () => {})
process.stdin.once('end', () => process.exit(0))
