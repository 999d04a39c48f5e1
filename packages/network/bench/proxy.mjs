// The proxy's costs, each against a baseline measured in the same run (never bare times):
// - a 100 MB download by curl from a local server, through a CONNECT tunnel and as plain HTTP,
//   against the same download direct (best of ROUNDS each, interleaved; curl's own time_total);
//   target: within 1.2x;
// - connection setup added by the proxy over CONNECTS connects (connect, the CONNECT or SOCKS5
//   handshake, one byte echoed) against a direct connect with one byte echoed, interleaved;
//   target: under 1 ms added at p50;
// - 200 tunnels open at once, each with 1 KiB echoed: RSS before, during and after; target:
//   under 256 KiB a tunnel (the proxy's two sockets and the bench's client socket together).
// The target runs in a process of its own, curl is the client; the proxy is this process, with
// the package's whole entry loaded (as in toolvisor, where the rest of the runtime is loaded too).
// Run after a build: `pnpm --filter @toolvisor/network bench`.
import { execFile, spawn } from 'node:child_process'
import { connect } from 'node:net'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { createProxy } from '../dist/index.js'

const ROUNDS = Number(process.env.ROUNDS ?? 7)
const SIZE = Number(process.env.SIZE ?? 100 * 1024 * 1024)
const CONNECTS = Number(process.env.CONNECTS ?? 500)
const CONCURRENT = Number(process.env.CONCURRENT ?? 200)

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc')

const target = spawn(process.execPath, [new URL('./target.mjs', import.meta.url).pathname], {
  stdio: ['pipe', 'pipe', 'inherit'],
})
const [httpPort, echoPort] = await new Promise((resolve) => {
  let text = ''
  target.stdout.on('data', (chunk) => {
    text += chunk
    if (text.includes('\n')) resolve(text.trim().split(' ').map(Number))
  })
})

// The name goes through the proxy's whole decision (rules, resolution, the local-range check
// an exact entry passes); the test seam stands in for DNS, which is not what is measured.
const proxy = createProxy({ resolve: async () => ['127.0.0.1'], maxConnections: CONCURRENT + 16 })
const gate = await proxy.open({
  id: 'bench',
  rules: { allow: ['bench.test'], deny: [] },
  listen: { tcp: true },
})
const gatePort = gate.tcpPort

const results = []
const verdict = (name, ok, text) => {
  results.push(ok)
  process.stdout.write(`${name}: ${text} ${ok ? 'PASS' : 'FAIL'}\n`)
}

function curlSeconds(args) {
  return new Promise((resolve, reject) => {
    execFile(
      'curl',
      ['-sS', '-o', '/dev/null', '-w', '%{time_total} %{size_download}', ...args],
      (error, stdout) => {
        if (error) return reject(error)
        const [seconds, size] = stdout.split(' ').map(Number)
        if (size !== SIZE) return reject(new Error(`downloaded ${size} bytes, not ${SIZE}`))
        resolve(seconds)
      },
    )
  })
}

async function downloads() {
  const cases = {
    direct: ['--noproxy', '*', `http://127.0.0.1:${httpPort}/bytes/${SIZE}`],
    'CONNECT tunnel': [
      '-p',
      '-x',
      `http://127.0.0.1:${gatePort}`,
      `http://bench.test:${httpPort}/bytes/${SIZE}`,
    ],
    'plain HTTP': ['-x', `http://127.0.0.1:${gatePort}`, `http://bench.test:${httpPort}/bytes/${SIZE}`],
  }
  const best = Object.fromEntries(Object.keys(cases).map((name) => [name, Number.POSITIVE_INFINITY]))
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, args] of Object.entries(cases))
      best[name] = Math.min(best[name], await curlSeconds(args))
  }
  const mb = SIZE / 1024 / 1024
  for (const name of ['CONNECT tunnel', 'plain HTTP']) {
    const ratio = best[name] / best.direct
    verdict(
      `download ${mb} MB, ${name}`,
      ratio <= 1.2,
      `${(mb / best[name]).toFixed(0)} MB/s, direct ${(mb / best.direct).toFixed(0)} MB/s, ratio ${ratio.toFixed(2)} (target <= 1.20, best of ${ROUNDS})`,
    )
  }
}

/** Resolves with the socket once `n` bytes came back on it. */
function echoed(socket, n) {
  return new Promise((resolve, reject) => {
    let got = 0
    const onData = (chunk) => {
      got += chunk.length
      if (got < n) return
      socket.off('data', onData)
      resolve(socket)
    }
    socket.on('data', onData)
    socket.once('error', reject)
  })
}

/** A connection usable end to end: `handshake` done on it (if any), then one byte echoed. */
function setUp(port, handshake) {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', noDelay: true })
    socket.once('error', reject)
    socket.once('connect', async () => {
      try {
        if (handshake) await handshake(socket)
        socket.write('x')
        resolve(await echoed(socket, 1))
      } catch (error) {
        reject(error)
      }
    })
  })
}

/** Reads until `n` bytes came (the handshake answers are small and fixed, or end with CRLF CRLF). */
function answer(socket, done) {
  return new Promise((resolve, reject) => {
    let text = Buffer.alloc(0)
    const onData = (chunk) => {
      text = Buffer.concat([text, chunk])
      if (!done(text)) return
      socket.off('data', onData)
      resolve(text)
    }
    socket.on('data', onData)
    socket.once('error', reject)
  })
}

const viaConnect = async (socket) => {
  socket.write(`CONNECT bench.test:${echoPort} HTTP/1.1\r\nHost: bench.test:${echoPort}\r\n\r\n`)
  const head = await answer(socket, (text) => text.includes('\r\n\r\n'))
  if (!head.toString().startsWith('HTTP/1.1 200')) throw new Error(head.toString())
}

const viaSocks = async (socket) => {
  const name = Buffer.from('bench.test')
  socket.write(Buffer.from([5, 1, 0, 5, 1, 0, 3, name.length, ...name, echoPort >> 8, echoPort & 255]))
  const reply = await answer(socket, (text) => text.length >= 12)
  if (reply[3] !== 0) throw new Error(`SOCKS5 reply ${reply[3]}`)
}

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
}

async function setups() {
  const times = { direct: [], CONNECT: [], SOCKS5: [] }
  const cases = [
    ['direct', echoPort, undefined],
    ['CONNECT', gatePort, viaConnect],
    ['SOCKS5', gatePort, viaSocks],
  ]
  for (let i = 0; i < 50; i++)
    for (const [, port, handshake] of cases) (await setUp(port, handshake)).destroy()
  for (let i = 0; i < CONNECTS; i++) {
    for (const [name, port, handshake] of cases) {
      const start = process.hrtime.bigint()
      const socket = await setUp(port, handshake)
      times[name].push(Number(process.hrtime.bigint() - start) / 1e6)
      socket.destroy()
    }
  }
  const base50 = percentile(times.direct, 50)
  const base99 = percentile(times.direct, 99)
  for (const name of ['CONNECT', 'SOCKS5']) {
    const added50 = percentile(times[name], 50) - base50
    const added99 = percentile(times[name], 99) - base99
    verdict(
      `connection setup, ${name}`,
      added50 < 1,
      `p50 ${percentile(times[name], 50).toFixed(3)} ms (direct ${base50.toFixed(3)}, added ${added50.toFixed(3)}, ratio ${(percentile(times[name], 50) / base50).toFixed(2)}), p99 ${percentile(times[name], 99).toFixed(3)} ms (direct ${base99.toFixed(3)}, added ${added99.toFixed(3)}) over ${CONNECTS} connects (target: under 1 ms added at p50)`,
    )
  }
}

async function concurrent() {
  const rss = () => {
    gc()
    return process.memoryUsage().rss / 1024 / 1024
  }
  const before = rss()
  const sockets = await Promise.all(Array.from({ length: CONCURRENT }, () => setUp(gatePort, viaConnect)))
  const kib = Buffer.alloc(1024, 0x62)
  await Promise.all(
    sockets.map((socket) => {
      socket.write(kib)
      return echoed(socket, 1024)
    }),
  )
  const open = gate.report()
  const during = rss()
  await Promise.all(
    sockets.map(
      (socket) =>
        new Promise((resolve) => {
          socket.once('close', resolve)
          socket.destroy()
        }),
    ),
  )
  // Wait for the proxy's side of every tunnel to close (a bound, polled).
  const end = Date.now() + 10_000
  while (
    process.getActiveResourcesInfo().filter((kind) => kind === 'TCPSocketWrap').length > 0 &&
    Date.now() < end
  ) {
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  const after = rss()
  const perConnection = ((during - before) * 1024) / CONCURRENT
  verdict(
    `${CONCURRENT} concurrent tunnels`,
    perConnection < 256,
    `RSS before ${before.toFixed(1)} MB, during ${during.toFixed(1)} MB (+${(during - before).toFixed(1)} MB, ${perConnection.toFixed(0)} KiB a tunnel with both its sockets and the client's), after ${after.toFixed(1)} MB; ${open.connections} connections made in all (target: under 256 KiB a tunnel)`,
  )
}

try {
  // Memory first, before the downloads' buffers have grown the heap and the RSS.
  await concurrent()
  await setups()
  await downloads()
} finally {
  await proxy.close()
  target.stdin.end()
}
process.stdout.write(`${results.filter(Boolean).length}/${results.length} PASS\n`)
