import type { Readable } from 'node:stream'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { describe, expect, it } from 'vitest'
import { groupAlive, groups } from './helpers.js'
import {
  alive,
  collect,
  fixture,
  fixtureTools,
  initializeRequest,
  pids,
  runFixture,
} from './stdio-helpers.js'

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
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(fixtureTools)
    expect(await client.callTool({ name: 'say__hello', arguments: { who: 'ada' } })).toEqual({
      content: [{ type: 'text', text: 'hello ada from stdio-session' }],
      isError: false,
    })
    const ticks: string[] = []
    const ticker = await client.callTool({ name: 'ticker' }, undefined, {
      onprogress: (p) => ticks.push(`${p.progress}:${p.message}`),
    })
    expect(ticker.content).toEqual([{ type: 'text', text: '3 ticks' }])
    // Each tick reaches the client in order, or (a client slow to read stdout, as under load) is
    // dropped and counted in the result: never lost unsaid.
    const dropped = (ticker._meta?.['toolvisor/progress'] as { dropped: number } | undefined)?.dropped ?? 0
    expect(ticks.length + dropped).toBe(3)
    expect(['1:tick 1', '2:tick 2', '3:tick 3'].filter((tick) => ticks.includes(tick))).toEqual(ticks)
    await client.close()
    // A line on stdout that is not JSON-RPC would have reached client.onerror.
    expect(errors).toEqual([])
    expect(stderr.text()).toContain('fixture: tool not loaded: /tb/broken: describe exited 2\n')
    expect(stderr.text()).toContain('fixture: serving 6 tools (1 failed to load) as session stdio-session\n')
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
  const initialize = initializeRequest

  it('writes only JSON-RPC lines to stdout and exits 0 on stdin EOF', async () => {
    const { child, stderr, exited, send, output, waitForMessage } = runFixture()
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
    await waitForMessage((m) => m.id === 4, 'the answer to 4')
    await waitForMessage((m) => m.id === 3, 'the answer to 3')
    child.stdin.end()
    expect(await exited).toBe(0)
    const text = output()
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
      content: [
        {
          type: 'text',
          text: 'unknown tool "nope"; the tools are: say__hello, ticker, sleeper, flood, big, add__tool',
        },
      ],
      isError: true,
    })
    expect(stderr.text()).toBe(
      [
        'fixture: tool not loaded: /tb/broken: describe exited 2',
        'fixture: serving 6 tools (1 failed to load) as session stdio-session',
        'fixture: served, stopped by the client',
        '',
      ].join('\n'),
    )
  })

  it('closes on SIGTERM through options.signal: the call in flight is cancelled and its group is gone', async () => {
    const { child, stderr, exited, send, output } = runFixture()
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
      output()
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).id),
    ).toEqual([0])
  })
})

describe('serveStdio, its default log', () => {
  it("shows the codes of a client's text it quotes as \\uXXXX (decision 0093)", async () => {
    const server = runFixture()
    await server.initialize()
    const id = 'x\u001b[2K\u202eexe\u200b\u{e0041}'
    server.send({ jsonrpc: '2.0', id, method: 'tools/list', params: { _meta: { progressToken: 1.5 } } })
    await server.stderr.waitFor(/ignored _meta\.progressToken/)
    const stderr = server.stderr.text()
    for (const raw of ['\u001b', '\u202e', '\u200b', '\u{e0041}']) expect(stderr).not.toContain(raw)
    expect(stderr).toContain(
      'request "x\\u001b[2K\\u202eexe\\u200b\\u{e0041}": ignored _meta.progressToken 1.5',
    )
    server.child.stdin.end()
    expect(await server.exited).toBe(0)
  })
})
