// Latency of a trivial oneshot call through MCP, as clients make it: the SDK clients against
// `toolvisor mcp` over stdio and against `toolvisor serve` over Streamable HTTP, in each revision
// (the v1 client speaks 2025-11-25, the v2 client pinned to 2026-07-28 speaks that one), each
// interleaved with a bare `child_process.spawn` of the same executable (the baseline, same run).
// Targets, in both revisions: stdio p50 <= 1.3x, HTTP p50 <= 2x. Run after a build: `pnpm bench`.
import { spawn } from 'node:child_process'
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernHttp,
} from '@modelcontextprotocol/client'
import { StdioClientTransport as ModernStdio } from '@modelcontextprotocol/client/stdio'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { bin, trivialToolbox } from './lib.mjs'

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 300)
// A daemon's steady state: the server's code is optimized over its first couple hundred calls (with
// 30, most measured calls ran before that and the HTTP ratio moved from 1.7 to 2.3 between runs).
const WARMUP = 200
const { root, toolbox, tool } = trivialToolbox('mcp-latency')

function bare() {
  return new Promise((resolve, reject) => {
    const child = spawn(tool, ['run'], { stdio: ['pipe', 'pipe', 'pipe'] })
    let out = ''
    child.on('error', reject)
    child.stdin.end()
    child.stdout.on('data', (chunk) => (out += chunk))
    child.stderr.resume()
    child.on('close', (code) =>
      code === 0 && out === 'ok\n' ? resolve() : reject(new Error(`bare: ${code}`)),
    )
  })
}

async function timed(fn) {
  const start = process.hrtime.bigint()
  await fn()
  return Number(process.hrtime.bigint() - start) / 1e6
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
const p99 = (values) => [...values].sort((a, b) => a - b)[Math.ceil(values.length * 0.99) - 1]

/** Interleaves `client` calls with bare spawns; returns both series. */
async function measure(client) {
  const call = async () => {
    const result = await client.callTool({ name: 'trivial', arguments: {} })
    if (result.isError || result.content[0]?.text !== 'ok\n')
      throw new Error(`call: ${JSON.stringify(result)}`)
  }
  for (let i = 0; i < WARMUP; i++) {
    await call()
    await bare()
  }
  const via = []
  const baseline = []
  for (let i = 0; i < ITERATIONS; i++) {
    // Alternate which goes first, so neither always runs right after the other's teardown.
    if (i % 2 === 0) {
      via.push(await timed(call))
      baseline.push(await timed(bare))
    } else {
      baseline.push(await timed(bare))
      via.push(await timed(call))
    }
  }
  return { via, baseline }
}

function report(name, { via, baseline }, target) {
  const ratio = median(via) / median(baseline)
  console.log(
    `${name}: p50 ${median(via).toFixed(2)} ms against ${median(baseline).toFixed(2)} ms for a bare spawn, ratio ${ratio.toFixed(2)} (target <= ${target}) ${ratio <= target ? 'PASS' : 'MISS'}; p99 ${p99(via).toFixed(2)} against ${p99(baseline).toFixed(2)} ms, ratio ${(p99(via) / p99(baseline)).toFixed(2)}`,
  )
}

/** The client of `era`: the v1 SDK's (2025-11-25), or the v2 SDK's pinned to 2026-07-28. */
const clients = {
  '2025-11-25': {
    client: () => new Client({ name: 'bench', version: '0' }),
    stdio: (options) => new StdioClientTransport(options),
    http: (url, headers) => new StreamableHTTPClientTransport(url, { requestInit: { headers } }),
  },
  '2026-07-28': {
    client: () =>
      new ModernClient(
        { name: 'bench', version: '0' },
        { versionNegotiation: { mode: { pin: '2026-07-28' } } },
      ),
    stdio: (options) => new ModernStdio(options),
    http: (url, headers) => new ModernHttp(url, { requestInit: { headers } }),
  },
}

async function overStdio(era) {
  const { client: made, stdio } = clients[era]
  const transport = stdio({
    command: process.execPath,
    args: [bin, 'mcp', '--toolbox', toolbox, '--state-dir', join(root, `state-stdio-${era}`)],
    stderr: 'ignore',
  })
  const client = made()
  await client.connect(transport)
  for (;;) {
    if ((await client.listTools()).tools.some((t) => t.name === 'trivial')) break
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  try {
    report(`oneshot over MCP stdio, ${era} (SDK client)`, await measure(client), 1.3)
  } finally {
    await client.close()
  }
}

async function overHttp(era) {
  const { client: made, http } = clients[era]
  const state = join(root, `state-http-${era}`)
  const server = spawn(
    process.execPath,
    [bin, 'serve', '--listen', '127.0.0.1:0', '--toolbox', toolbox, '--state-dir', state],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  )
  let stderr = ''
  server.stderr.on('data', (chunk) => (stderr += chunk))
  while (!/ at (http:\S+) /.test(stderr)) await new Promise((resolve) => setTimeout(resolve, 20))
  const url = / at (http:\S+) /.exec(stderr)[1]
  const token = readFileSync(join(state, 'serve.token'), 'utf8').trim()
  const client = made()
  // A 2026-07-28 client has no protocol session: it names its toolvisor session (decision 0109).
  await client.connect(
    http(new URL(url), { authorization: `Bearer ${token}`, 'x-toolvisor-session': 'bench' }),
  )
  try {
    report(`oneshot over MCP Streamable HTTP, ${era} (SDK client)`, await measure(client), 2)
  } finally {
    await client.close()
    server.kill('SIGTERM')
    await new Promise((resolve) => server.once('exit', resolve))
  }
}

try {
  for (const era of Object.keys(clients)) {
    await overStdio(era)
    await overHttp(era)
  }
} finally {
  rmSync(root, { recursive: true, force: true })
}
