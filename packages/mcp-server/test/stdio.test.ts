import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import type { Readable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { groupAlive, groups, reapGroups, waitFor } from './helpers.js'

const fixture = fileURLToPath(new URL('./fixtures/serve-stdio.mjs', import.meta.url))
const dist = fileURLToPath(new URL('../dist/index.js', import.meta.url))

const children: ChildProcessWithoutNullStreams[] = []
const pids: number[] = []

beforeAll(() => {
  if (!existsSync(dist)) {
    throw new Error(
      `${dist} is missing: the stdio fixture runs the built package; run pnpm --filter @toolvisor/mcp-server build`,
    )
  }
})

afterEach(async () => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  for (const pid of pids.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {}
  }
  expect(await reapGroups()).toEqual([])
})

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Collects a stream's text; `lines()` is what arrived so far. */
function collect(stream: Readable): {
  text: () => string
  waitFor: (re: RegExp) => Promise<RegExpMatchArray>
} {
  let buffer = ''
  stream.setEncoding('utf8')
  stream.on('data', (chunk: string) => {
    buffer += chunk
  })
  return {
    text: () => buffer,
    async waitFor(re) {
      await waitFor(() => re.test(buffer), 10_000, `${re} on the server's stderr`)
      return buffer.match(re)!
    },
  }
}

describe('serveStdio, with the SDK stdio client', () => {
  async function start() {
    const transport = new StdioClientTransport({ command: process.execPath, args: [fixture], stderr: 'pipe' })
    const stderr = collect(transport.stderr as Readable)
    const client = new Client({ name: 'stdio-test', version: '0.0.1' })
    const errors: Error[] = []
    client.onerror = (error) => errors.push(error)
    await client.connect(transport)
    pids.push(transport.pid!)
    return { client, transport, stderr, errors, pid: transport.pid! }
  }

  it('lists, calls and reports progress; stdout carries JSON-RPC only; logs go to stderr', async () => {
    const { client, stderr, errors } = await start()
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['say__hello', 'ticker', 'sleeper'])
    expect(await client.callTool({ name: 'say__hello', arguments: { who: 'ada' } })).toEqual({
      content: [{ type: 'text', text: 'hello ada from stdio-session' }],
      isError: false,
    })
    const ticks: string[] = []
    const ticker = await client.callTool({ name: 'ticker' }, undefined, {
      onprogress: (p) => ticks.push(`${p.progress}:${p.message}`),
    })
    expect(ticker.content).toEqual([{ type: 'text', text: '3 ticks' }])
    expect(ticks).toEqual(['1:tick 1', '2:tick 2', '3:tick 3'])
    await client.close()
    // A line on stdout that is not JSON-RPC would have reached client.onerror.
    expect(errors).toEqual([])
    expect(stderr.text()).toContain('fixture: tool not loaded: /tb/broken: describe exited 2\n')
    expect(stderr.text()).toContain('fixture: serving 3 tools (1 failed to load) as session stdio-session\n')
  })

  it('resolves when the client closes stdin, cancelling a call in flight and killing its process group', async () => {
    const { client, stderr, pid } = await start()
    const pending = client.callTool({ name: 'sleeper' }).catch((e: unknown) => e)
    const pgid = Number((await stderr.waitFor(/sleep-pgid (\d+)/))[1])
    groups.add(pgid)
    expect(groupAlive(pgid)).toBe(true)
    const before = Date.now()
    await client.close() // ends stdin; the SDK client escalates to SIGTERM only after 2 s
    expect(Date.now() - before).toBeLessThan(1900)
    expect(await pending).toBeInstanceOf(Error)
    expect(stderr.text()).toContain('fixture: sleeper aborted\n')
    expect(stderr.text()).toContain('fixture: served, stopped by the client\n')
    expect(groupAlive(pgid)).toBe(false)
    expect(alive(pid)).toBe(false)
  })
})

describe('serveStdio, byte for byte', () => {
  function run() {
    const child = spawn(process.execPath, [fixture], { stdio: ['pipe', 'pipe', 'pipe'] })
    children.push(child)
    const stdout = collect(child.stdout)
    const stderr = collect(child.stderr)
    const exited = new Promise<number | string>((resolve) =>
      child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
    )
    const send = (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`)
    return { child, stdout, stderr, exited, send }
  }

  const initialize = {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
  }

  it('writes only JSON-RPC lines to stdout and exits 0 on stdin EOF', async () => {
    const { child, stdout, stderr, exited, send } = run()
    send(initialize)
    send({ jsonrpc: '2.0', method: 'notifications/initialized' })
    send({ jsonrpc: '2.0', id: 1, method: 'tools/list' })
    send({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'say__hello', arguments: { who: 'bo' } },
    })
    send({
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'ticker', _meta: { progressToken: 't' } },
    })
    send({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'nope' } })
    await stdout.waitFor(/"id":4/)
    await stdout.waitFor(/"id":3/)
    child.stdin.end()
    expect(await exited).toBe(0)
    const text = stdout.text()
    expect(text.endsWith('\n')).toBe(true)
    const messages = text
      .slice(0, -1)
      .split('\n')
      .map((line) => JSON.parse(line) as { jsonrpc: string; id?: number; method?: string; result?: unknown })
    for (const message of messages) expect(message.jsonrpc).toBe('2.0')
    expect(messages.filter((m) => m.method === 'notifications/progress')).toEqual(
      [1, 2, 3].map((n) => ({
        jsonrpc: '2.0',
        method: 'notifications/progress',
        params: { progressToken: 't', progress: n, message: `tick ${n}` },
      })),
    )
    expect(messages.find((m) => m.id === 2)?.result).toEqual({
      content: [{ type: 'text', text: 'hello bo from stdio-session' }],
      isError: false,
    })
    expect(messages.find((m) => m.id === 4)?.result).toEqual({
      content: [{ type: 'text', text: 'unknown tool "nope"; the tools are: say__hello, ticker, sleeper' }],
      isError: true,
    })
    expect(stderr.text()).toBe(
      [
        'fixture: tool not loaded: /tb/broken: describe exited 2',
        'fixture: serving 3 tools (1 failed to load) as session stdio-session',
        'fixture: served, stopped by the client',
        '',
      ].join('\n'),
    )
  })

  it('closes on SIGTERM through options.signal: the call in flight is cancelled and its group is gone', async () => {
    const { child, stdout, stderr, exited, send } = run()
    send(initialize)
    send({ jsonrpc: '2.0', method: 'notifications/initialized' })
    send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'sleeper' } })
    const pgid = Number((await stderr.waitFor(/sleep-pgid (\d+)/))[1])
    groups.add(pgid)
    expect(groupAlive(pgid)).toBe(true)
    child.kill('SIGTERM')
    expect(await exited).toBe(0)
    expect(groupAlive(pgid)).toBe(false)
    expect(stderr.text()).toContain('fixture: sleeper aborted\n')
    expect(stderr.text()).toContain('fixture: served, stopped by SIGTERM\n')
    // The cancelled call gets no response; only the initialize answer was written.
    expect(
      stdout
        .text()
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).id),
    ).toEqual([0])
  })
})
