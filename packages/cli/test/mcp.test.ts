import type { ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import {
  bin,
  eventually,
  examples,
  fixtures,
  run,
  tagged,
  taggedCommands,
  tempDir,
  toolvisor,
} from './helpers.js'
import { ERAS, type Era, type EraClient, stdioClient } from './mcp-eras.js'
import { rawMcp } from './raw-mcp.js'

let clients: Array<{ client: EraClient; tag: string }> = []
afterEach(async () => {
  for (const { client, tag } of clients) {
    await client.close()
    const deadline = Date.now() + 3000
    while (tagged(tag).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25))
    expect(tagged(tag), 'processes left running').toEqual([])
  }
  clients = []
})

/**
 * An SDK client on `toolvisor mcp --toolbox DIR... EXTRA...`, speaking `era` (2025-11-25 by
 * default). The server answers the client's first request before its toolboxes are loaded; unless
 * `loaded` is false, this waits until they are (its stderr says so).
 */
async function connect(
  toolboxes: string[],
  extra: string[] = [],
  { loaded = true, stateDir = tempDir('tv-mcp-state-'), era = '2025-11-25' as Era } = {},
) {
  const tag = randomUUID()
  let stderr = ''
  const { client, pid } = await stdioClient(
    era,
    {
      command: process.execPath,
      args: [
        bin,
        'mcp',
        ...toolboxes.flatMap((dir) => ['--toolbox', dir]),
        ...extra,
        '--state-dir',
        stateDir,
      ],
      env: { ...(process.env as Record<string, string>), TV_TEST_TAG: tag },
      stderr: 'pipe',
    },
    (chunk) => {
      stderr += chunk.toString('utf8')
    },
  )
  clients.push({ client, tag })
  const isLoaded = () => /\ntoolvisor: toolboxes loaded in \d+ ms\n/.test(stderr)
  const deadline = Date.now() + 20_000
  while (loaded && !isLoaded() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
  if (loaded) expect(isLoaded(), stderr).toBe(true)
  return { client, tag, pid, stderr: () => stderr }
}

const textOf = (result: unknown) =>
  (result as { content: Array<{ text: string }> }).content.map((c) => c.text).join('\n')

describe.each(ERAS)('toolvisor mcp, with the SDK client over stdio, speaking %s', (era) => {
  it('lists the example tools with provider-safe names and JSON Schemas', async () => {
    const { client } = await connect([examples], [], { era })
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name).sort()).toEqual(
      [
        'counter',
        'echo_args',
        'file_stats',
        'git_lite__log',
        'git_lite__status',
        'help',
        'log_lines',
        'log_watcher',
        'log_watcher__send',
        'processes',
        'word_count',
      ].sort(),
    )
    const echo = tools.find((t) => t.name === 'echo_args')!
    expect(echo.inputSchema).toEqual({
      type: 'object',
      properties: expect.objectContaining({
        limit: { type: 'integer', description: 'a number; passed as --limit=VALUE' },
      }),
      required: ['path', 'pattern', 'limit', 'note'],
      additionalProperties: false,
    })
  })

  it('passes one argument of each mode exactly, as through toolvisor call', async () => {
    const { client } = await connect([examples], [], { era })
    const result = await client.callTool({
      name: 'echo_args',
      arguments: { path: 'a b', pattern: 'p q', limit: 2, note: 'line\twith tab', 'api-token': 't' },
    })
    expect(result.isError).toBeFalsy()
    expect(JSON.parse(textOf(result))).toEqual({
      argv: ['a b', '--pattern', 'p q', '--limit=2'],
      stdin: 'line\twith tab\n',
      env: { API_TOKEN: 't' },
    })
  })

  it('calls sub-commands, help and the processes tool, and reports failures as isError results', async () => {
    const { client } = await connect([examples], [], { era })
    const log = await client.callTool({
      name: 'git_lite__log',
      arguments: { dir: join(examples, '..', '..'), n: 1 },
    })
    expect(log.isError).toBeFalsy()
    const help = await client.callTool({ name: 'help', arguments: { tool: 'git_lite__log' } })
    expect(textOf(help)).toMatch(/git log/)
    const bad = await client.callTool({ name: 'word_count', arguments: { text: { nested: true } } })
    expect(bad.isError).toBe(true)
    expect(textOf(bad)).toBe(
      'word_count: argument "text": expected a string; got an object; the arguments are "text" (string, required), ' +
        '"top" (integer, optional); the tool was not run',
    )
    const list = await client.callTool({ name: 'processes', arguments: { command: 'list' } })
    expect(JSON.parse(textOf(list))).toEqual({ processes: [] })
  })

  it('sends progress notifications for each event when the client asks for them', async () => {
    const { client } = await connect([examples], [], { era })
    const seen: Array<{ progress: number; message?: string }> = []
    const result = await client.callTool(
      { name: 'counter', arguments: { to: 4, 'every-ms': 20 } },
      {
        onprogress: (p) => seen.push({ progress: p.progress, ...(p.message ? { message: p.message } : {}) }),
      },
    )
    expect(result.isError).toBeFalsy()
    // Once seen short of its last under load (CI, 2026-12-07): the server's own count, if it dropped one, says so.
    expect(
      seen.map((p) => p.progress),
      JSON.stringify(result._meta ?? {}),
    ).toEqual([1, 2, 3, 4])
    expect(JSON.parse(seen[0]!.message!)).toMatchObject({ n: 1 })
  })

  it('kills the tool and everything it started when the client cancels the call', async () => {
    const box = tempDir('tv-mcp-box-')
    mkdirSync(join(box, 'tools'))
    symlinkSync(join(fixtures, 'spawner'), join(box, 'tools', 'spawner'))
    const { client, tag } = await connect([join(box, 'tools')], [], { era })
    const controller = new AbortController()
    const call = client.callTool({ name: 'spawner', arguments: {} }, { signal: controller.signal })
    const deadline = Date.now() + 10_000
    const ofTool = () => taggedCommands(tag).filter((command) => /spawner|sleep 300/.test(command))
    const sleeps = () => ofTool().filter((command) => command === 'sleep 300').length
    // The spawner's child and grandchild are both up.
    while (sleeps() < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25))
    expect(sleeps()).toBe(2)
    controller.abort()
    await expect(call).rejects.toThrow()
    const gone = Date.now() + 3000
    while (ofTool().length > 0 && Date.now() < gone) await new Promise((r) => setTimeout(r, 25))
    // No process of the tool's group is left; toolvisor itself keeps serving.
    expect(ofTool()).toEqual([])
    expect(taggedCommands(tag).some((command) => command.includes(' mcp '))).toBe(true)
  })

  it('answers initialize while a describe still runs; a tools/list waits for the load, and the tools are announced', async () => {
    const box = tempDir('tv-mcp-slow-')
    const release = join(tempDir('tv-mcp-release-'), 'release')
    writeFileSync(
      join(box, 'late'),
      `#!/bin/sh\ncase "$1" in\ndescribe) while [ ! -e '${release}' ]; do sleep 0.02; done; echo '{"slug": "late", "description": "loads late", "args": []}' ;;\nrun) echo late ;;\nesac\n`,
      { mode: 0o755 },
    )
    writeFileSync(join(box, 'broken'), '#!/bin/sh\nexit 1\n', { mode: 0o755 })
    symlinkSync(join(examples, 'word-count'), join(box, 'word-count'))
    const { client, tag, stderr } = await connect([box], [], { loaded: false, era })
    // initialize was answered while the describe of `late` still waits.
    expect(
      await eventually(() => taggedCommands(tag).some((command) => command.endsWith('late describe'))),
    ).toBe(true)
    expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: true })
    const announced = client.nextToolsChange()
    // A tools/list sent now is held until the load ends: a client that lists once sees every tool.
    let listed: string[] | undefined
    const listing = client.listTools().then((answer) => {
      listed = answer.tools.map((t) => t.name).sort()
    })
    // So is a call of a tool not loaded yet (a client that remembers the tools calls at once).
    const early = client.callTool({ name: 'late', arguments: {} })
    // The server answers meanwhile (a ping in 2025, a discover in 2026, which has no ping).
    expect(await client.alive()).toBeDefined()
    expect(listed).toBeUndefined()
    writeFileSync(release, '')
    await listing
    expect(listed).toEqual(['late', 'processes', 'word_count'])
    expect(textOf(await early)).toBe('late\n')
    await announced
    expect(textOf(await client.callTool({ name: 'late', arguments: {} }))).toBe('late\n')
    expect(stderr()).toContain(
      `\ntoolvisor: tool not loaded: ${join(box, 'broken')}: describe exited with code 1`,
    )
    // What it served before the load ended is said as such, then what the load brought.
    expect(stderr()).toMatch(/^toolvisor: serving 1 tool as session \S+ while the toolboxes load\n/)
    expect(stderr()).toMatch(/\ntoolvisor: serving 3 tools \(1 failed to load\)\n/)
  })

  it('ends at once when the client leaves while a describe still runs, and stops that describe', async () => {
    const box = tempDir('tv-mcp-hang-')
    writeFileSync(join(box, 'hangs'), '#!/bin/sh\nsleep 300\n', { mode: 0o755 })
    const { client, tag } = await connect([box], [], { loaded: false, era })
    expect(
      await eventually(() => taggedCommands(tag).some((command) => command.endsWith('hangs describe'))),
    ).toBe(true)
    const before = Date.now()
    await client.close() // ends stdin; the SDK client escalates to SIGTERM only after 2 s
    expect(Date.now() - before).toBeLessThan(1900)
    const deadline = Date.now() + 3000
    while (tagged(tag).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25))
    expect(taggedCommands(tag)).toEqual([])
  })

  it('serves the good tools when a toolbox holds a broken one, and logs the failure to stderr', async () => {
    const box = tempDir('tv-mcp-broken-')
    writeFileSync(join(box, 'broken'), '#!/bin/sh\nexit 1\n', { mode: 0o755 })
    symlinkSync(join(examples, 'word-count'), join(box, 'word-count'))
    const { client } = await connect([box], [], { era })
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name)).toEqual(['processes', 'word_count'])
  })
})

describe('toolvisor mcp, byte for byte', () => {
  it('--max-message-bytes: a longer message is answered with -32600 and skipped; the session goes on', async () => {
    const server = rawMcp(['--toolbox', examples, '--max-message-bytes', '2000'])
    await server.initialize()
    const call = (id: number, text: string) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'word_count', arguments: { text } },
    })
    server.send(call(1, 'w '.repeat(1000)))
    server.send(call(2, 'two words'))
    await server.waitForMessage((m) => m.id === 2)
    const bytes = JSON.stringify(call(1, 'w '.repeat(1000))).length
    expect(server.messages().find((m) => m.id === 1)).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: {
        code: -32600,
        message: `Invalid Request: the message is ${bytes} bytes, over the limit of 2000 bytes (maxMessageBytes); it was discarded unread`,
        data: { bytes, maxMessageBytes: 2000 },
      },
    })
    expect(server.messages().find((m) => m.id === 2)?.result).toMatchObject({ isError: false })
    server.child.stdin.end()
    expect(await server.exited).toBe(0)
  })

  it.each([
    ['SIGTERM', (child: ChildProcess) => child.kill('SIGTERM')],
    ['stdin EOF', (child: ChildProcess) => child.stdin!.end()],
  ])(
    '%s ends it while its client reads nothing: it exits within 5 s and leaves no tool running',
    async (_what, end) => {
      const box = tempDir('tv-mcp-unread-')
      symlinkSync(join(fixtures, 'spawner'), join(box, 'spawner'))
      const server = rawMcp(['--toolbox', examples, '--toolbox', box], { read: false })
      await server.initialize()
      // About 1 MB of answers, far more than the pipe and the reader's buffer hold: answered in process,
      // long before the spawner below has started its children.
      for (let id = 1; id <= 200; id++) server.send({ jsonrpc: '2.0', id, method: 'tools/list' })
      server.send({
        jsonrpc: '2.0',
        id: 201,
        method: 'tools/call',
        params: { name: 'spawner', arguments: {} },
      })
      const sleeps = () => taggedCommands(server.tag).filter((command) => command === 'sleep 300').length
      const deadline = Date.now() + 10_000
      while (sleeps() < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25))
      expect(sleeps()).toBe(2)
      const before = Date.now()
      end(server.child)
      const bound = new Promise<string>((resolve) => setTimeout(() => resolve('still running'), 5000).unref())
      expect(await Promise.race([server.exited, bound])).toBe(0)
      expect(Date.now() - before).toBeLessThan(5000)
      expect(taggedCommands(server.tag)).toEqual([])
      expect(server.stderr()).toMatch(
        /\ntoolvisor: \d+ bytes of output were not read by the client; exiting without them in 1000 ms unless it reads\n$/,
      )
    },
  )

  it('--max-queued-bytes: past it, a client that reads nothing loses its session, its tools are stopped, and the server exits', async () => {
    const box = tempDir('tv-mcp-unread-')
    symlinkSync(join(fixtures, 'spawner'), join(box, 'spawner'))
    const server = rawMcp(['--toolbox', examples, '--toolbox', box, '--max-queued-bytes', '65536'], {
      read: false,
    })
    await server.initialize()
    server.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'spawner', arguments: {} } })
    const sleeps = () => taggedCommands(server.tag).filter((command) => command === 'sleep 300').length
    const deadline = Date.now() + 10_000
    while (sleeps() < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25))
    expect(sleeps()).toBe(2)
    for (let id = 2; id <= 200; id++) server.send({ jsonrpc: '2.0', id, method: 'tools/list' })
    expect(await server.exited).toBe(0)
    expect(server.stderr()).toMatch(
      /\ntoolvisor: the client is not reading stdout: \d+ bytes wait for it, over maxQueuedBytes 65536; closing the session\n/,
    )
    expect(taggedCommands(server.tag)).toEqual([])
  })

  it('--max-concurrent-calls and --max-queued-calls: a call past both is refused with an isError result', async () => {
    const box = tempDir('tv-mcp-caps-')
    symlinkSync(join(fixtures, 'spawner'), join(box, 'spawner'))
    const server = rawMcp(['--toolbox', box, '--max-concurrent-calls', '1', '--max-queued-calls', '0'])
    await server.initialize()
    const spawner = (id: number) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'spawner', arguments: {} },
    })
    server.send(spawner(1))
    server.send(spawner(2))
    expect((await server.waitForMessage((m) => m.id === 2)).result).toEqual({
      content: [
        {
          type: 'text',
          text: 'tool "spawner" was not run: this session already has 1 calls running and 0 waiting (maxConcurrentCalls 1, maxQueuedCalls 0); retry when one of them has finished',
        },
      ],
      isError: true,
    })
    server.child.stdin.end()
    expect(await server.exited).toBe(0)
  })

  it.each([
    ['--max-message-bytes', '1e6', 'expected a positive whole number, got "1e6"'],
    ['--max-concurrent-calls', '0', 'expected a positive whole number, got "0"'],
    ['--max-queued-calls', '1.5', 'expected a whole number, got "1.5"'],
  ])('refuses %s %s', async (flag, value, why) => {
    const { code, stderr } = await toolvisor(['mcp', '--toolbox', examples, flag, value]).done
    expect(code).toBe(2)
    expect(stderr).toBe(`toolvisor mcp: ${flag}: ${why}\n`)
  })

  it('serves the capabilities of --config when no toolbox is given', async () => {
    const dir = tempDir('tv-mcp-config-')
    const config = join(dir, 'toolvisor.json')
    writeFileSync(
      config,
      JSON.stringify({
        capabilities: [{ capability: 'web_read', backends: [join(fixtures, 'web', 'read-curl')] }],
      }),
    )
    const { client } = await connect([], ['--config', config])
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['processes', 'web_read'])
    const page = await client.callTool({ name: 'web_read', arguments: { url: 'http://x.example' } })
    expect(textOf(page)).toBe('page http://x.example via curl\n[backend: read-curl]')
  })

  it('serves the same tools as check reports, a toolbox with reserved and clashing names included', async () => {
    const box = tempDir('tv-mcp-names-')
    const tool = (file: string, slug: string, extra = '') =>
      writeFileSync(
        join(box, file),
        `#!/bin/sh\ncase "$1" in\ndescribe) echo '{"protocol": 2, "slug": "${slug}", "description": "d", "args": []${extra}}' ;;\nrun) echo ${slug} ;;\nesac\n`,
        { mode: 0o755 },
      )
    tool('a', 'help')
    tool('b', 'processes')
    tool('c', 'dup', ', "help": true')
    tool('d', 'dup')
    tool('e', 'fine')
    const { client } = await connect([box])
    const served = (await client.listTools()).tools.map((t) => t.name).sort()
    expect(served).toEqual(['dup', 'fine', 'help', 'processes'])
    const check = await run(['check', '--toolbox', box, '--json'])
    expect(check.code).toBe(1)
    const doc = JSON.parse(check.stdout)
    expect([...doc.serves].sort()).toEqual([...served].sort())
    expect(doc.errors).toEqual([
      `${box}/a: $.slug: "help" is reserved for toolvisor's shared help tool; rename the tool`,
      `${box}/b: $.slug: "processes" is reserved for toolvisor's shared processes tool; rename the tool`,
      `${box}/d: $.slug: "dup" is already the name of a tool of ${box}/c; rename one of them`,
    ])
  })

  it('takes ring sizes, the answer budget and the event caps from toolvisor.json', async () => {
    const dir = tempDir('tv-mcp-bounds-')
    const box = join(dir, 'tools')
    mkdirSync(box)
    symlinkSync(join(examples, 'counter'), join(box, 'counter'))
    writeFileSync(
      join(box, 'flood'),
      `#!/bin/sh\ncase "$1" in\ndescribe) echo '{"slug": "flood", "description": "5000 bytes", "args": []}' ;;\nrun) head -c 5000 /dev/zero | tr '\\0' x ;;\nesac\n`,
      { mode: 0o755 },
    )
    const config = join(dir, 'toolvisor.json')
    writeFileSync(
      config,
      JSON.stringify({
        toolboxes: ['tools'],
        resultBytes: 1000,
        ringEvents: 10,
        maxEvents: 2000,
        streamResultEvents: 2,
      }),
    )
    const { client } = await connect([], ['--config', config])
    const processes = (await client.listTools()).tools.find((t) => t.name === 'processes')!
    expect(processes.inputSchema.properties?.n).toMatchObject({ maximum: 2000 })
    expect(processes.description).toContain('(default 20, at most 2000)')
    const flood = textOf(await client.callTool({ name: 'flood', arguments: {} }))
    expect(flood).toMatch(
      /\n\[output truncated: showing the first 1000 of 5000 bytes; read on with processes /,
    )
    const count = textOf(await client.callTool({ name: 'counter', arguments: { to: 30, 'every-ms': 1 } }))
    expect(JSON.parse(count.split('\n')[0]!).map((e: { n: number }) => e.n)).toEqual([29, 30])
    const status = JSON.parse(
      textOf(await client.callTool({ name: 'processes', arguments: { command: 'status', process: 't1' } })),
    )
    expect(status.counters).toMatchObject({ events: 30, elided: 20 })
  })
})

describe.each(ERAS)(
  "a stream followed and stopped within one session (the README's Inspector path), speaking %s",
  (era) => {
    it('answers with the placeholder after the yield window, reads the events so far, and stops the task', async () => {
      const dir = tempDir('tv-mcp-follow-')
      const config = join(dir, 'toolvisor.json')
      writeFileSync(config, JSON.stringify({ toolboxes: [examples], yieldMs: 300 }))
      const { client } = await connect([], ['--config', config], { era })
      const started = JSON.parse(
        textOf(await client.callTool({ name: 'counter', arguments: { to: 1000, 'every-ms': 50 } })),
      )
      expect(started).toMatchObject({ status: 'running', task: 't1', tool: 'counter' })
      expect(started.message).toContain('"command":"read","process":"t1"')
      const read = async () =>
        JSON.parse(
          textOf(await client.callTool({ name: 'processes', arguments: { command: 'read', process: 't1' } })),
        )
      // The first event comes when the counter's Node has started, which may be after the window.
      const deadline = Date.now() + 10_000
      let first = await read()
      while (first.events.length === 0 && Date.now() < deadline) first = await read()
      expect(first.events.length).toBeGreaterThan(0)
      expect(first.events[0]).toMatchObject({ n: 1 })
      let next = await read()
      while (next.events.length === 0 && Date.now() < deadline) next = await read()
      expect(next.events[0].n).toBe(first.events.at(-1).n + 1)
      const stop = (await client.callTool({
        name: 'processes',
        arguments: { command: 'stop', process: 't1' },
      })) as {
        content: Array<{ text: string }>
      }
      const stopped = JSON.parse(stop.content[0]!.text)
      expect(stopped).toEqual({
        process: 't1',
        status: 'exited',
        exitCode: 143,
        signal: null,
        reason: 'cancelled',
      })
    })
  },
)

describe('toolvisor mcp after a crash (issue 10.2)', () => {
  it('the session that comes back by its name sees its lost task; another session never does; the operator is told', async () => {
    const stateDir = tempDir('tv-mcp-crash-')
    const config = join(stateDir, 'toolvisor.json')
    writeFileSync(config, JSON.stringify({ toolboxes: [examples], yieldMs: 0 }))
    const first = await connect([], ['--config', config, '--session', 'agent-a'], { stateDir })
    const started = await first.client.callTool({
      name: 'counter',
      arguments: { to: 100000, 'every-ms': 50 },
    })
    expect(JSON.parse(textOf(started))).toMatchObject({ status: 'running', task: 't1' })
    const counters = () => taggedCommands(first.tag).filter((c) => c.includes('counter'))
    expect(await eventually(() => counters().length > 0)).toBe(true)
    process.kill(first.pid()!, 'SIGKILL')
    const deadline = Date.now() + 3000
    while (counters().length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25))
    expect(counters()).toEqual([])

    const back = await connect([], ['--config', config, '--session', 'agent-a'], { stateDir })
    expect(back.stderr()).toContain(
      'toolvisor: an earlier run ended with 1 process(es) running; they are stopped and reported lost: t1 counter (session agent-a)',
    )
    // The news is mail, once (decision 0052): here a wait, which shows nothing else, returns it.
    const waited = JSON.parse(
      textOf(
        await back.client.callTool({ name: 'processes', arguments: { command: 'wait', timeout_seconds: 5 } }),
      ),
    )
    expect(waited.mail).toEqual([
      expect.objectContaining({
        id: expect.stringMatching(/^lost-t1-/),
        from: 'task:t1',
        kind: 'completion',
        body: {
          task: 't1',
          tool: 'counter',
          kind: 'stream',
          status: 'failed: lost on restart',
          startedAt: expect.any(String),
        },
      }),
    ])
    const answer = textOf(await back.client.callTool({ name: 'processes', arguments: { command: 'list' } }))
    expect(answer).not.toContain('[mail')
    const listed = JSON.parse(answer)
    expect(listed.processes).toMatchObject([
      { process: 't1', tool: 'counter', status: 'failed: lost on restart' },
    ])
    expect(JSON.stringify(listed)).toContain('lost on restart')

    const other = await connect([], ['--config', config, '--session', 'agent-b'], { stateDir })
    const theirs = JSON.parse(
      textOf(await other.client.callTool({ name: 'processes', arguments: { command: 'list' } })),
    )
    expect(theirs.processes).toEqual([])

    const probe = await run(['check', '--probe', '--config', config, '--state-dir', stateDir])
    expect(probe.stdout).toContain(
      '  lost on restart (1; a run that died with them running, found at a later start):',
    )
    expect(probe.stdout).toMatch(/\n {4}t1 counter \(stream\), session agent-a, started \d{4}-/)
  })
})
