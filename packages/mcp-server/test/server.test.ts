import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import type { ToolCallContext } from '@toolvisor/toolbox'
import { createToolRegistry } from '@toolvisor/toolbox'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createMcpServer, McpServerError, type McpServerOptions } from '../src/index.js'
import {
  connect,
  deferred,
  groupAlive,
  reapGroups,
  schema,
  sleepTool,
  text,
  tool,
  waitFor,
} from './helpers.js'

const closers: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const close of closers.splice(0)) await close()
  expect(await reapGroups()).toEqual([])
})

async function setup(...args: Parameters<typeof connect>) {
  const connected = await connect(...args)
  closers.push(async () => {
    await connected.client.close()
    await connected.surface.close()
  })
  return connected
}

function echoTool(name: string) {
  return tool(name, async (args, ctx) =>
    text(JSON.stringify({ args, sessionId: ctx.sessionId, progress: ctx.progress !== undefined })),
  )
}

describe('tools/list', () => {
  it('lists every tool under its provider-safe name, with its description and inputSchema as is', async () => {
    const tools = createToolRegistry()
    const inputSchema = { ...schema('path'), $comment: 'kept verbatim' }
    tools.register({ ...echoTool('a.b'), inputSchema, description: 'reads a b' })
    tools.register(echoTool('plain'))
    const { client } = await setup(tools)
    const listed = await client.listTools()
    expect(listed.tools).toEqual([
      { name: 'a__b', description: 'reads a b', inputSchema },
      { name: 'plain', description: 'the plain tool', inputSchema: schema() },
    ])
  })

  it('reads the registry at each request, so tools registered later are listed', async () => {
    const tools = createToolRegistry()
    const { client } = await setup(tools)
    expect((await client.listTools()).tools).toEqual([])
    tools.register(echoTool('late.one'))
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['late__one'])
  })
})

describe('tools/list_changed', () => {
  it('announces tools registered after connect, once per change, and logs the load reports that came with them', async () => {
    const tools = createToolRegistry()
    tools.register(echoTool('first'))
    const { client, logs, sent } = await setup(tools)
    expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: true })
    const announced = deferred<void>()
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => announced.resolve())
    tools.register(echoTool('second'))
    tools.register(echoTool('third'))
    tools.reportLoadError({
      severity: 'error',
      tool: '/tb/x',
      message: '/tb/x: describe exited 1',
      code: 'X',
    })
    await announced.promise
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['first', 'second', 'third'])
    expect(sent.filter((m) => 'method' in m && m.method === 'notifications/tools/list_changed')).toHaveLength(
      1,
    )
    expect(logs.slice(1)).toEqual([
      'toolvisor-test: tool not loaded: /tb/x: describe exited 1',
      'toolvisor-test: tools changed: serving 3 tools (1 failed to load)',
    ])
  })

  it('does not declare listChanged for a registry that cannot tell (no onChange)', async () => {
    const { onChange: _, ...registry } = createToolRegistry()
    const { client } = await setup(registry)
    expect(client.getServerCapabilities()?.tools).toEqual({})
  })
})

describe('tools/call', () => {
  it('calls a tool by its safe name with the arguments and the connection session', async () => {
    const tools = createToolRegistry()
    tools.register(echoTool('a.b'))
    const { client } = await setup(tools, { sessionId: 'session-7' })
    const result = await client.callTool({ name: 'a__b', arguments: { path: '/tmp' } })
    expect(result).toEqual({
      content: [{ type: 'text', text: '{"args":{"path":"/tmp"},"sessionId":"session-7","progress":false}' }],
      isError: false,
    })
  })

  it('passes {} when the client sends no arguments', async () => {
    const tools = createToolRegistry()
    tools.register(echoTool('noargs'))
    const { client } = await setup(tools, { sessionId: 's' })
    const result = await client.callTool({ name: 'noargs' })
    expect(result.content).toEqual([{ type: 'text', text: '{"args":{},"sessionId":"s","progress":false}' }])
  })

  it('gives every call of one server the same random mcp-<uuid> session, and each server its own', async () => {
    const tools = createToolRegistry()
    tools.register(echoTool('who'))
    const first = await setup(tools)
    const second = await setup(tools)
    const sessionOf = async (c: typeof first) => {
      const result = await c.client.callTool({ name: 'who' })
      return JSON.parse((result.content as { text: string }[])[0]!.text).sessionId as string
    }
    const a1 = await sessionOf(first)
    expect(a1).toMatch(/^mcp-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
    expect(await sessionOf(first)).toBe(a1)
    expect(first.surface.sessionId).toBe(a1)
    expect(await sessionOf(second)).not.toBe(a1)
  })

  it('passes an isError result through unchanged', async () => {
    const tools = createToolRegistry()
    tools.register(tool('fails', async () => text('exit 3\nstderr: no such file', true)))
    const { client } = await setup(tools)
    expect(await client.callTool({ name: 'fails' })).toEqual({
      content: [{ type: 'text', text: 'exit 3\nstderr: no such file' }],
      isError: true,
    })
  })

  it('answers an unknown tool with an isError result naming the tools that exist', async () => {
    const tools = createToolRegistry()
    tools.register(echoTool('a.b'))
    tools.register(echoTool('c'))
    const { client, sent } = await setup(tools)
    expect(await client.callTool({ name: 'nope' })).toEqual({
      content: [{ type: 'text', text: 'unknown tool "nope"; the tools are: a__b, c' }],
      isError: true,
    })
    expect(sent.some((m) => 'error' in m)).toBe(false)
  })

  it('turns a rejecting tool into an isError result, logs it, and keeps serving', async () => {
    const tools = createToolRegistry()
    tools.register(
      tool('broken.one', async () => {
        throw new Error('cannot read properties of undefined')
      }),
    )
    tools.register(
      tool('throws.string', () => {
        throw 'a bare string'
      }),
    )
    tools.register(echoTool('fine'))
    const { client, logs } = await setup(tools)
    expect(await client.callTool({ name: 'broken__one' })).toEqual({
      content: [
        {
          type: 'text',
          text: 'tool "broken__one" failed inside toolvisor: cannot read properties of undefined',
        },
      ],
      isError: true,
    })
    expect(await client.callTool({ name: 'throws__string' })).toEqual({
      content: [{ type: 'text', text: 'tool "throws__string" failed inside toolvisor: a bare string' }],
      isError: true,
    })
    const failures = logs.filter((l) => l.includes('rejected'))
    expect(failures).toHaveLength(2)
    expect(failures[0]).toMatch(
      /^toolvisor-test: tool "broken\.one" rejected \(a bug: tools answer failures with isError\): Error: cannot read properties of undefined\n {4}at /,
    )
    expect(failures[1]).toBe(
      'toolvisor-test: tool "throws.string" rejected (a bug: tools answer failures with isError): a bare string',
    )
    expect((await client.callTool({ name: 'fine' })).isError).toBe(false)
  })
})

describe('structuredContent', () => {
  class Point {
    x = 1
  }
  it.each([
    ['a JSON object', { files: 2, names: ['a', 'b'] }, true],
    ['an object with a null prototype', Object.assign(Object.create(null), { ok: true }), true],
    ['an array (a jsonl oneshot)', [{ n: 1 }, { n: 2 }], false],
    ['a string', 'just text', false],
    ['a number', 42, false],
    ['null', null, false],
    ['a class instance', new Point(), false],
  ])('with %s: included only when it is a JSON object', async (_what, structured, included) => {
    const tools = createToolRegistry()
    tools.register(
      tool('structured', async () => ({
        content: [{ type: 'text', text: 'rendered' }],
        isError: false,
        structuredContent: structured,
        meta: { exitCode: 0 },
      })),
    )
    const { client } = await setup(tools)
    const result = await client.callTool({ name: 'structured' })
    // The meta crosses either way (in _meta); only structuredContent depends on its shape.
    const expected = { content: [{ type: 'text', text: 'rendered' }], isError: false, _meta: { exitCode: 0 } }
    expect(result).toEqual(included ? { ...expected, structuredContent: { ...structured } } : expected)
  })

  it('leaves it out when the tool gives none', async () => {
    const tools = createToolRegistry()
    tools.register(tool('plain', async () => text('x')))
    const { client } = await setup(tools)
    expect(Object.keys(await client.callTool({ name: 'plain' })).sort()).toEqual(['content', 'isError'])
  })
})

describe('progress', () => {
  function progressTool(count: number, seen: { ctx?: ToolCallContext }) {
    return tool('ticker', async (_args, ctx) => {
      seen.ctx = ctx
      for (let i = 1; i <= count; i++) {
        ctx.progress?.({ progress: i, message: `{"n":${i}}`, event: { n: i } })
        await new Promise((r) => setImmediate(r))
      }
      return text(`${count} events`)
    })
  }

  it('sends one notifications/progress per event, in order, when the client sent a progressToken', async () => {
    const tools = createToolRegistry()
    tools.register(progressTool(5, {}))
    const { client, sent } = await setup(tools)
    const received: { progress: number; message?: string }[] = []
    const result = await client.callTool({ name: 'ticker' }, undefined, {
      onprogress: (p) =>
        received.push({ progress: p.progress, ...(p.message ? { message: p.message } : {}) }),
    })
    expect(result.content).toEqual([{ type: 'text', text: '5 events' }])
    expect(received).toEqual([1, 2, 3, 4, 5].map((n) => ({ progress: n, message: `{"n":${n}}` })))
    const notes = sent.filter((m) => 'method' in m && m.method === 'notifications/progress')
    expect(notes).toHaveLength(5)
    expect(notes[0]).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/progress',
      params: { progressToken: expect.anything(), progress: 1, message: '{"n":1}' },
    })
  })

  it('gives the tool no progress callback and sends no notification without a progressToken', async () => {
    const tools = createToolRegistry()
    const seen: { ctx?: ToolCallContext } = {}
    tools.register(progressTool(3, seen))
    const { client, sent } = await setup(tools)
    await client.callTool({ name: 'ticker' })
    expect(seen.ctx?.progress).toBeUndefined()
    expect(sent.filter((m) => 'method' in m && m.method === 'notifications/progress')).toEqual([])
  })

  it('never throws from the callback once the connection is gone', async () => {
    const tools = createToolRegistry()
    const gotCtx = deferred<ToolCallContext>()
    const release = deferred<void>()
    const threw: unknown[] = []
    const done = deferred<void>()
    tools.register(
      tool('late', async (_args, ctx) => {
        gotCtx.resolve(ctx)
        await release.promise
        for (let i = 1; i <= 3; i++) {
          try {
            ctx.progress?.({ progress: i, message: `late ${i}` })
          } catch (error) {
            threw.push(error)
          }
        }
        done.resolve()
        return text('too late')
      }),
    )
    const { client, surface } = await setup(tools)
    const pending = client.callTool({ name: 'late' }, undefined, { onprogress: () => {} })
    const ctx = await gotCtx.promise
    expect(ctx.progress).toBeTypeOf('function')
    await client.close()
    await expect(pending).rejects.toThrow(/Connection closed/)
    release.resolve()
    await done.promise
    await surface.closed
    expect(threw).toEqual([])
  })
})

describe('cancellation', () => {
  it('aborts the call when the client cancels: the tool sees the abort and its process group is gone', async () => {
    const tools = createToolRegistry()
    const sleeper = sleepTool('sleep.thirty')
    tools.register(sleeper.tool)
    const { client, logs } = await setup(tools)
    const probe = sleeper.arm()
    const stop = new AbortController()
    const pending = client.callTool({ name: 'sleep__thirty' }, undefined, { signal: stop.signal })
    const pgid = await probe.started
    expect(groupAlive(pgid)).toBe(true)
    stop.abort('user pressed stop')
    await expect(pending).rejects.toThrow('user pressed stop')
    expect(await probe.aborted).toBe('user pressed stop')
    await waitFor(() => !groupAlive(pgid), 5000, `process group ${pgid} to exit`)
    // The server keeps serving after a cancelled call, and the tool's late answer was dropped quietly.
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['sleep__thirty'])
    expect(logs.filter((l) => l.includes('rejected'))).toEqual([])
  })

  it('aborts the calls in flight when the server closes, and `closed` waits for them to settle', async () => {
    const tools = createToolRegistry()
    const sleeper = sleepTool()
    tools.register(sleeper.tool)
    const { client, surface } = await setup(tools)
    const probe = sleeper.arm()
    const pending = client.callTool({ name: 'sleeper' }).catch((e: unknown) => e)
    const pgid = await probe.started
    await surface.close()
    // close() resolves only after the tool answered, so its child is already gone.
    expect(groupAlive(pgid)).toBe(false)
    expect(await probe.aborted).toMatchObject({ name: 'AbortError' })
    expect(await pending).toMatchObject({ message: 'MCP error -32000: Connection closed' })
  })

  it('stops waiting after settleTimeoutMs for a tool that ignores the abort, and logs it', async () => {
    const tools = createToolRegistry()
    const started = deferred<void>()
    tools.register(
      tool('stubborn.one', () => {
        started.resolve()
        return new Promise(() => {})
      }),
    )
    const { client, surface, logs } = await setup(tools, { settleTimeoutMs: 50 })
    const pending = client.callTool({ name: 'stubborn__one' }).catch((e: unknown) => e)
    await started.promise
    await surface.close()
    expect(logs).toContain('toolvisor-test: 1 call(s) still running 50 ms after close: stubborn__one')
    expect(await pending).toBeInstanceOf(Error)
  })
})

describe('logging', () => {
  it('logs the load errors and what it serves when it connects', async () => {
    const tools = createToolRegistry()
    tools.register(echoTool('ok'))
    tools.reportLoadError({
      severity: 'error',
      tool: '/tb/bad',
      message: '/tb/bad: $.args[0].mode: must be one of positional, dashdashspace, ...',
      code: 'DESCRIBE_ERR_INVALID_FIELD',
      field: '$.args[0].mode',
    })
    tools.reportLoadError({
      severity: 'warning',
      tool: '/tb/ok',
      message: '/tb/ok: optional positional "a" comes before positional "b"',
      code: 'DESCRIBE_WARNING',
    })
    const { logs } = await setup(tools, { sessionId: 'sess-1' })
    expect(logs).toEqual([
      'toolvisor-test: tool not loaded: /tb/bad: $.args[0].mode: must be one of positional, dashdashspace, ...',
      'toolvisor-test: warning: /tb/ok: optional positional "a" comes before positional "b"',
      'toolvisor-test: serving 1 tool (1 failed to load) as session sess-1',
    ])
  })

  it('logs to stderr by default and writes nothing to stdout', async () => {
    const stdout = vi.spyOn(process.stdout, 'write')
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true)
    try {
      const tools = createToolRegistry()
      tools.register(
        tool('boom', async () => {
          throw new Error('kaput')
        }),
      )
      tools.register(
        tool('ok', async (_a, ctx) => {
          ctx.progress?.({ progress: 1, message: 'one' })
          return text('ok')
        }),
      )
      const surface = createMcpServer(tools, { name: 'tv', version: '0', sessionId: 's' })
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
      await surface.connect(serverSide)
      const { Client } = await import('@modelcontextprotocol/sdk/client/index.js')
      const client = new Client({ name: 'c', version: '0' })
      await client.connect(clientSide)
      await client.listTools()
      await client.callTool({ name: 'boom' })
      await client.callTool({ name: 'ok' }, undefined, { onprogress: () => {} })
      await client.callTool({ name: 'missing' })
      await client.close()
      await surface.closed
      const written = stderr.mock.calls.map((c) => String(c[0]))
      expect(written[0]).toBe('tv: serving 2 tools as session s\n')
      expect(written.some((w) => w.startsWith('tv: tool "boom" rejected'))).toBe(true)
      expect(written.every((w) => w.endsWith('\n'))).toBe(true)
      expect(stdout).not.toHaveBeenCalled()
    } finally {
      stdout.mockRestore()
      stderr.mockRestore()
    }
  })
})

describe('errors', () => {
  const tools = createToolRegistry()
  it.each([
    [
      { name: '', version: '1' },
      'createMcpServer: options.name: must be a non-empty string (the server name MCP clients show)',
    ],
    [
      { name: 'tv', version: '' },
      'createMcpServer: options.version: must be a non-empty string (the server version MCP clients show)',
    ],
    [
      { name: 'tv', version: '1', sessionId: '' },
      'createMcpServer: options.sessionId: must be a non-empty string when given (leave it out for a random one)',
    ],
    [
      { name: 'tv', version: '1', maxMessageBytes: 0 },
      'createMcpServer: options.maxMessageBytes: must be a positive integer (bytes)',
    ],
    [
      { name: 'tv', version: '1', maxMessageBytes: 1.5 },
      'createMcpServer: options.maxMessageBytes: must be a positive integer (bytes)',
    ],
    [
      { name: 'tv', version: '1', maxQueuedBytes: -1 },
      'createMcpServer: options.maxQueuedBytes: must be a positive integer (bytes)',
    ],
    [
      { name: 'tv', version: '1', maxConcurrentCalls: 0 },
      'createMcpServer: options.maxConcurrentCalls: must be a positive integer (calls)',
    ],
    [
      { name: 'tv', version: '1', maxQueuedCalls: -1 },
      'createMcpServer: options.maxQueuedCalls: must be a non-negative integer (calls)',
    ],
    [
      { name: 'tv', version: '1', progressPerSecond: 0.5 },
      'createMcpServer: options.progressPerSecond: must be a positive integer (notifications a second)',
    ],
    [
      { name: 'tv', version: '1', progressBurst: '5' },
      'createMcpServer: options.progressBurst: must be a positive integer (notifications)',
    ],
  ])('MCP_ERR_INVALID_OPTIONS for %j', (options, message) => {
    const error = (() => {
      try {
        // A caller without types can pass anything; the edge says what is wrong.
        createMcpServer(tools, options as McpServerOptions)
        return undefined
      } catch (e) {
        return e
      }
    })()
    expect(McpServerError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'MCP_ERR_INVALID_OPTIONS', message })
  })

  it('MCP_ERR_ALREADY_CONNECTED when one server is connected twice, or after close', async () => {
    const { surface } = await setup(tools)
    const [, other] = InMemoryTransport.createLinkedPair()
    await expect(surface.connect(other)).rejects.toMatchObject({
      code: 'MCP_ERR_ALREADY_CONNECTED',
      message:
        'createMcpServer: this server is already connected; one server serves one connection (one session): create another with createMcpServer',
    })
    await surface.close()
    await expect(surface.connect(other)).rejects.toMatchObject({
      code: 'MCP_ERR_ALREADY_CONNECTED',
      message:
        'createMcpServer: this server is closed; one server serves one connection (one session): create another with createMcpServer',
    })
  })

  it('close() before connect() resolves at once, and the server cannot connect afterwards', async () => {
    const surface = createMcpServer(tools, { name: 'tv', version: '1', log: () => {} })
    const closing = surface.close()
    const first = await Promise.race([
      closing.then(() => 'closed'),
      new Promise((resolve) => setImmediate(() => resolve('still pending'))),
    ])
    expect(first).toBe('closed')
    const [, other] = InMemoryTransport.createLinkedPair()
    await expect(surface.connect(other)).rejects.toMatchObject({ code: 'MCP_ERR_ALREADY_CONNECTED' })
  })
})
