import { chmodSync, statSync, writeFileSync } from 'node:fs'
import { type AddressInfo, createServer } from 'node:net'
import { join } from 'node:path'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { eventually } from '@toolvisor/process-runtime/testing'
import { describe, expect, it } from 'vitest'
import { run, tagged, taggedCommands, tempDir } from './helpers.js'
import { flood } from './http-flood.js'
import { connect, serve, textOf, turn } from './serve-helpers.js'

const list = async (client: Client) =>
  JSON.parse(textOf(await client.callTool({ name: 'processes', arguments: { command: 'list' } }))).processes

describe('toolvisor serve', () => {
  it("keeps a client's task running while it is away, for it alone; SIGTERM stops everything and exits 0", async () => {
    const server = await serve()
    expect((statSync(join(server.state, 'serve.token')).mode & 0o777).toString(8)).toBe('600')
    const a = await connect(server.url, server.token)
    const b = await connect(server.url, server.token)
    const started = JSON.parse(
      textOf(await a.client.callTool({ name: 'counter', arguments: { to: 100000, 'every-ms': 50 } })),
    )
    expect(started).toMatchObject({ status: 'running', task: 't1' })
    const id = a.transport.sessionId!
    await a.transport.close() // the client goes away without ending its session
    expect(await list(b.client)).toEqual([])
    expect(
      textOf(await b.client.callTool({ name: 'processes', arguments: { command: 'stop', process: 't1' } })),
    ).toContain('task t1 belongs to another session')
    const back = await connect(server.url, server.token, id)
    expect(await list(back.client)).toMatchObject([{ process: 't1', tool: 'counter', status: 'running' }])
    expect(taggedCommands(server.tag).some((c) => c.includes('counter'))).toBe(true)
    server.child.kill('SIGTERM')
    expect(await server.exited).toBe(0)
    expect(server.stderr()).toContain('toolvisor: stopping: every process gets its declared cancel')
    expect(await eventually(() => tagged(server.tag).length === 0, 3000)).toBe(true)
  })

  it('refuses a listener beyond loopback without --allow-remote, a missing --listen, and a token file others can read', async () => {
    const remote = await run(['serve', '--listen', '0.0.0.0:0'])
    expect(remote.code).toBe(2)
    expect(remote.stderr).toBe(
      'toolvisor serve: --listen 0.0.0.0:0: not a loopback address; pass --allow-remote to listen there (only the token guards it)\n',
    )
    const missing = await run(['serve'])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toMatch(
      /^toolvisor serve: --listen is required \(or serve\.listen in --config FILE\)\n/,
    )
    const file = join(tempDir('tv-serve-token-'), 'token')
    writeFileSync(file, 'x'.repeat(32))
    chmodSync(file, 0o644)
    const loose = await run(['serve', '--listen', '127.0.0.1:0', '--token-file', file])
    expect(loose.code).toBe(2)
    expect(loose.stderr).toBe(
      `toolvisor serve: --token-file ${file}: readable by others (mode 644); chmod 600 it\n`,
    )
  })
})

describe('toolvisor mcp --connect (the bridge)', () => {
  for (const over of ['tcp', 'unix'] as const) {
    it(`two turns with one --session share the daemon's tasks (${over})`, async () => {
      const socket = join(tempDir('tv-serve-sock-'), 'serve.sock')
      const server = await serve([], over === 'tcp' ? '127.0.0.1:0' : `unix:${socket}`)
      if (over === 'unix') expect((statSync(socket).mode & 0o777).toString(8)).toBe('600')
      const address = over === 'tcp' ? new URL(server.url).host : `unix:${socket}`
      const first = await turn(address, server.state, 'agent-1', server.tag)
      const started = JSON.parse(
        textOf(await first.callTool({ name: 'counter', arguments: { to: 100000, 'every-ms': 50 } })),
      )
      expect(started).toMatchObject({ status: 'running', task: 't1' })
      await first.close()
      const second = await turn(address, server.state, 'agent-1', server.tag)
      expect(await list(second)).toMatchObject([{ process: 't1', tool: 'counter', status: 'running' }])
      const other = await turn(address, server.state, 'agent-2', server.tag)
      expect(await list(other)).toEqual([])
      server.child.kill('SIGTERM')
      expect(await server.exited).toBe(0)
    })
  }

  it('says so and exits 2 when the daemon is not there, or refuses the token', async () => {
    const state = tempDir('tv-bridge-state-')
    const token = join(state, 'serve.token')
    writeFileSync(token, 'x'.repeat(32), { mode: 0o600 })
    const free = createServer()
    await new Promise<void>((resolve) => free.listen(0, '127.0.0.1', resolve))
    const { port } = free.address() as AddressInfo
    await new Promise((resolve) => free.close(resolve))
    const none = await run(['mcp', '--connect', `127.0.0.1:${port}`, '--session', 'a', '--token-file', token])
    expect(none.code).toBe(2)
    expect(none.stderr).toBe(
      `toolvisor mcp: cannot reach toolvisor serve at http://127.0.0.1:${port}/mcp: ECONNREFUSED; is it running?\n`,
    )
    const server = await serve()
    const wrong = await run([
      'mcp',
      '--connect',
      new URL(server.url).host,
      '--session',
      'a',
      '--token-file',
      token,
    ])
    expect(wrong.code).toBe(2)
    expect(wrong.stderr).toBe(
      `toolvisor mcp: toolvisor serve at ${server.url} refused the token (401): check --token-file\n`,
    )
    const nameless = await run(['mcp', '--connect', '127.0.0.1:9', '--token-file', token])
    expect(nameless.stderr).toBe(
      'toolvisor mcp: --connect needs --session NAME: the session every turn of this client shares\n',
    )
  })
})

/** What the server holds after a full garbage collection (its memory probe answers SIGUSR2). */
async function held(server: Awaited<ReturnType<typeof serve>>): Promise<{ heap: number; rss: number }> {
  const before = server.stderr().split('memory-probe').length
  server.child.kill('SIGUSR2')
  expect(await eventually(() => server.stderr().split('memory-probe').length > before)).toBe(true)
  const last = server
    .stderr()
    .split('\n')
    .filter((line) => line.startsWith('memory-probe'))
    .at(-1)!
  const [, heap, rss] = /heapUsed=(\d+) rss=(\d+)/.exec(last)!
  return { heap: Number(heap), rss: Number(rss) }
}

describe('toolvisor serve under a flood', () => {
  it('answers 1,000 requests from 50 connections with the right errors, leaks no process, and its memory settles', async () => {
    // Memory is read after a full collection; MALLOC_ARENA_MAX=2 (as docs/guides/operating.md
    // recommends for the daemon) keeps glibc's per-thread arenas from inflating RSS at random.
    const probe = join(import.meta.dirname, 'fixtures', 'memory-probe.cjs')
    const server = await serve([], '127.0.0.1:0', {
      args: ['--expose-gc', '--require', probe],
      env: { MALLOC_ARENA_MAX: '2' },
    })
    // Three floods warm the server up (JIT, heap sizes, and the allocator's arenas: RSS is a
    // high-water mark). On Node 24 under the whole suite two were not enough: RSS was 180 MB after
    // two and 227 MB after the third, where it then stayed (2 s of probes), with the heap lower;
    // unloaded, 218 MB after two. What it holds after the third is the baseline.
    const floods = []
    for (let i = 0; i < 3; i++) floods.push(await flood(server.url, server.token, 1000, 50))
    const baseline = await held(server)
    floods.push(await flood(server.url, server.token, 1000, 50))
    let after = await held(server)
    // RSS also moves with the allocator's fragmentation: a bump past 10% under a loaded machine
    // (1.117 once in CI, on Node 24, with the heap lower than before) gets one more flood. What
    // settles comes back under the bound; a leak only grows, and fails here all the more.
    if (after.rss / baseline.rss >= 1.1) {
      floods.push(await flood(server.url, server.token, 1000, 50))
      after = await held(server)
    }
    for (const statuses of floods) {
      expect(new Set(statuses['no token'])).toEqual(new Set([401]))
      expect(new Set(statuses['wrong token'])).toEqual(new Set([401]))
      expect(new Set(statuses['bad origin'])).toEqual(new Set([403]))
      expect(new Set(statuses['not json'])).toEqual(new Set([400]))
      expect(new Set(statuses['stale session'])).toEqual(new Set([404]))
      expect(new Set(statuses.session)).toEqual(new Set([200]))
    }
    const figures = `heap ${baseline.heap} -> ${after.heap} bytes, RSS ${baseline.rss} -> ${after.rss} bytes`
    expect(after.heap / baseline.heap, figures).toBeLessThan(1.1)
    // RSS within 25%: on Node 24 under the whole suite it still rose 14% over two floods with the
    // heap lower (1.14 twice in CI; 1.005 to 1.05 alone): the allocator's, not a leak of ours, as
    // far as measured (left open in the closing note). A leak of 20 KB a request still fails.
    expect(after.rss / baseline.rss, figures).toBeLessThan(1.25)
    // Every session of the flood ended with its DELETE, and nothing it ran is left.
    expect(taggedCommands(server.tag).filter((c) => !/bin\.js serve|watchdog\.js/.test(c))).toEqual([])
    const client = await connect(server.url, server.token)
    expect((await client.client.listTools()).tools.length).toBeGreaterThan(1)
    server.child.kill('SIGTERM')
    expect(await server.exited).toBe(0)
  }, 120_000)
})

describe('toolvisor serve and services', () => {
  it('serves a service to an HTTP client, keeps it across a reconnect, and its mail reaches the client when it is back', async () => {
    const server = await serve()
    const dir = tempDir('tv-serve-logs-')
    const log = join(dir, 'app.log')
    writeFileSync(log, '')
    const first = await connect(server.url, server.token)
    expect(
      JSON.parse(textOf(await first.client.callTool({ name: 'log_watcher', arguments: { file: log } }))),
    ).toMatchObject({
      process: 'p1',
      status: 'running',
    })
    const sessionId = first.transport.sessionId!
    await first.client.close()
    writeFileSync(log, 'while away\n', { flag: 'a' })
    const again = await connect(server.url, server.token, sessionId)
    let folded = ''
    for (let i = 0; i < 20 && !folded.includes('"line":"while away"'); i++) {
      folded += textOf(
        await again.client.callTool({
          name: 'processes',
          arguments: { command: 'wait', timeout_seconds: 2 },
        }),
      )
    }
    // Delivered once, by whichever came first: `wait`'s JSON, or a block folded into a result.
    expect(folded).toMatch(/("from":"process:p1"|\[mail m\d+ from process:p1\] )[^\n]*"line":"while away"/)
    server.child.kill('SIGTERM')
    expect(await server.exited).toBe(0)
  })
})
