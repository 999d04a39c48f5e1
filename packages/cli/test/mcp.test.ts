import { randomUUID } from 'node:crypto'
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { afterEach, describe, expect, it } from 'vitest'
import { bin, examples, fixtures, run, tagged, taggedCommands, tempDir } from './helpers.js'

let clients: Array<{ client: Client; tag: string }> = []
afterEach(async () => {
  for (const { client, tag } of clients) {
    await client.close()
    const deadline = Date.now() + 3000
    while (tagged(tag).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25))
    expect(tagged(tag), 'processes left running').toEqual([])
  }
  clients = []
})

async function connect(toolboxes: string[], extra: string[] = []) {
  const tag = randomUUID()
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [
      bin,
      'mcp',
      ...toolboxes.flatMap((dir) => ['--toolbox', dir]),
      ...extra,
      '--state-dir',
      tempDir('tv-mcp-state-'),
    ],
    env: { ...(process.env as Record<string, string>), TV_TEST_TAG: tag },
    stderr: 'pipe',
  })
  const client = new Client({ name: 'toolvisor-test', version: '0.0.0' })
  await client.connect(transport)
  clients.push({ client, tag })
  return { client, tag }
}

const textOf = (result: unknown) =>
  (result as { content: Array<{ text: string }> }).content.map((c) => c.text).join('\n')

describe('toolvisor mcp, with the SDK client over stdio', () => {
  it('lists the example tools with provider-safe names and JSON Schemas', async () => {
    const { client } = await connect([examples])
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
    const { client } = await connect([examples])
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
    const { client } = await connect([examples])
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
    const { client } = await connect([examples])
    const seen: Array<{ progress: number; message?: string }> = []
    const result = await client.callTool(
      { name: 'counter', arguments: { to: 4, 'every-ms': 20 } },
      undefined,
      {
        onprogress: (p) => seen.push({ progress: p.progress, ...(p.message ? { message: p.message } : {}) }),
      },
    )
    expect(result.isError).toBeFalsy()
    expect(seen.map((p) => p.progress)).toEqual([1, 2, 3, 4])
    expect(JSON.parse(seen[0]!.message!)).toMatchObject({ n: 1 })
  })

  it('kills the tool and everything it started when the client cancels the call', async () => {
    const box = tempDir('tv-mcp-box-')
    mkdirSync(join(box, 'tools'))
    symlinkSync(join(fixtures, 'spawner'), join(box, 'tools', 'spawner'))
    const { client, tag } = await connect([join(box, 'tools')])
    const controller = new AbortController()
    const call = client.callTool({ name: 'spawner', arguments: {} }, undefined, { signal: controller.signal })
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

  it('serves the good tools when a toolbox holds a broken one, and logs the failure to stderr', async () => {
    const box = tempDir('tv-mcp-broken-')
    writeFileSync(join(box, 'broken'), '#!/bin/sh\nexit 1\n', { mode: 0o755 })
    symlinkSync(join(examples, 'word-count'), join(box, 'word-count'))
    const { client } = await connect([box])
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name)).toEqual(['word_count', 'processes'])
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
    const served = (await client.listTools()).tools.map((t) => t.name)
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
