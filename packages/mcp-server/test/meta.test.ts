// Issue 28, audit point 6: every field of a result's `meta` reaches an MCP client in `_meta`, under
// its own name. For each bash profile and a binary toolbox tool, the same calls go through the
// library (`tools.call`) and through an SDK client connected to the MCP server over a wire that
// carries JSON text; `PROFILES` lists, per profile and call, the `meta` a library result carries,
// and MCP's `_meta` (less the keys the server and the SDK set themselves) must carry exactly that.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { CreateTaskResultSchema } from '@modelcontextprotocol/sdk/experimental/tasks/types.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { CallToolResultSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import { describePlugin } from '@toolvisor/describe-v2'
import { Kernel } from '@toolvisor/kernel'
import { launchNativePlugin } from '@toolvisor/launch-native'
import { markedProcesses, type Runtime, RuntimeToken, runtimePlugin } from '@toolvisor/process-runtime'
import { eventually } from '@toolvisor/process-runtime/testing'
import { type TaskRegistry, TasksToken, tasksPlugin } from '@toolvisor/tasks'
import { bashPlugin } from '@toolvisor/tool-bash'
import {
  createToolRegistry,
  type ToolCallContext,
  type ToolRegistry,
  type ToolResult,
  ToolsToken,
  toolboxPlugin,
} from '@toolvisor/toolbox'
import { afterEach, describe, expect, it } from 'vitest'
import { createMcpServer, PRESENTATION_META_KEY } from '../src/index.js'
import { schema } from './helpers.js'

const aProcess = expect.stringMatching(/^proc-\d+$/)
const anId = expect.stringMatching(/^[\w-]+$/)
/** What the process tree used: always its spill bytes, the cgroup's figures where one accounted. */
const aUsage = expect.objectContaining({ spillBytes: 0 })
/** The file a background task's stdout is kept in (every byte of it, decision 0092). */
const aStdoutSpill = expect.stringMatching(/\/spill\/proc-\d+\.stdout$/)

/** A foreground command's meta (seed 001's run, the foreground `bash` of dsh and toolnexus). */
const FOREGROUND = { process: aProcess, exitCode: 3, signal: null, reason: 'exit', usage: aUsage }

interface Step {
  /** What the call is, for the reader. */
  readonly what: string
  readonly tool: string
  /** Its arguments; `id`: the background id the latest step that started one answered, on the same path. */
  readonly args: (id: string) => Record<string, unknown>
  /** The `meta` the library result carries, and so the `_meta` fields MCP carries ({}: none). */
  readonly meta: Record<string, unknown>
}

interface Profile {
  readonly profile: string
  /** The bash plugin's config; absent: no bash, only the toolbox. */
  readonly bash?: Record<string, unknown>
  readonly steps: readonly Step[]
}

const d = 'what it does'

/** Per profile, what a library result carries in `meta`, call by call: what MCP carries in `_meta`. */
const PROFILES: readonly Profile[] = [
  {
    profile: 'dsh (seed 001, the default)',
    bash: { profile: 'dsh' },
    steps: [
      {
        what: 'bash, foreground',
        tool: 'bash',
        args: () => ({ command: 'echo out; exit 3', description: d }),
        meta: FOREGROUND,
      },
      {
        what: 'bash, background, ended within wait_seconds',
        tool: 'bash',
        args: () => ({ command: 'echo done', description: d, run_in_background: true, wait_seconds: 20 }),
        meta: { task: anId, stdoutSpill: aStdoutSpill },
      },
      {
        what: 'bash, background',
        tool: 'bash',
        args: () => ({ command: 'sleep 30', description: d, run_in_background: true }),
        meta: {},
      },
      { what: 'bash_output', tool: 'bash_output', args: (id) => ({ task_id: id }), meta: {} },
      { what: 'bash_kill', tool: 'bash_kill', args: (id) => ({ task_id: id }), meta: {} },
    ],
  },
  {
    profile: 'toolnexus (seed 004)',
    bash: { profile: 'toolnexus' },
    steps: [
      {
        what: 'bash, foreground',
        tool: 'bash',
        args: () => ({ command: 'echo out; exit 3' }),
        meta: FOREGROUND,
      },
      {
        what: 'bash, background',
        tool: 'bash',
        args: () => ({ command: 'sleep 30', run_in_background: true }),
        meta: { backgroundId: anId },
      },
      { what: 'bash_output', tool: 'bash_output', args: (id) => ({ id }), meta: {} },
      { what: 'kill_shell', tool: 'kill_shell', args: (id) => ({ id }), meta: {} },
    ],
  },
  {
    profile: 'hyperhive (seed 002)',
    bash: { profile: 'hyperhive' },
    steps: [
      // Its report is structuredContent, not meta.
      {
        what: 'run, ended within the wait',
        tool: 'run',
        args: () => ({ cmd: 'exit 3', wait_seconds: 20 }),
        meta: {},
      },
      {
        what: 'run, still running',
        tool: 'run',
        args: () => ({ cmd: 'sleep 30', wait_seconds: 0 }),
        meta: {},
      },
      { what: 'status', tool: 'status', args: (id) => ({ id }), meta: {} },
      { what: 'kill', tool: 'kill', args: (id) => ({ id }), meta: {} },
    ],
  },
  {
    profile: 'a binary toolbox tool (oneshot)',
    steps: [
      {
        what: 'greet, a oneshot that writes to stdout and stderr',
        tool: 'greet',
        args: () => ({}),
        meta: {
          process: aProcess,
          exitCode: 0,
          signal: null,
          reason: 'exit',
          stdoutBytes: 6,
          stderrBytes: 5,
        },
      },
    ],
  },
]

/** The background id a start answered (every profile's own words), if it started one. */
function startedId(result: { content: readonly { text: string }[] }): string | undefined {
  const text = result.content.map((c) => c.text).join('\n')
  return /background (?:task|shell) ([\w-]+)|task started: id=([\w-]+)/.exec(text)?.slice(1).find(Boolean)
}

/** The `_meta` keys the server and the SDK set themselves; the rest are the result's meta fields. */
const OWN_KEY = /^(toolvisor\/|io\.modelcontextprotocol\/)/

/** MCP's `_meta`, less the server's and the SDK's own keys. */
function metaFieldsOf(result: { _meta?: Record<string, unknown> | undefined }): Record<string, unknown> {
  return Object.fromEntries(Object.entries(result._meta ?? {}).filter(([key]) => !OWN_KEY.test(key)))
}

/** `meta` as JSON text carries it. */
function json(meta: ToolResult['meta']): Record<string, unknown> {
  return JSON.parse(JSON.stringify(meta ?? {}))
}

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** A toolbox holding `greet`: a protocol 2 oneshot that prints `hello` and `note` on stderr. */
function greetBox(): string {
  const box = tempDir('tv-meta-box-')
  const document = {
    protocol: 2,
    slug: 'greet',
    description: 'says hello',
    args: [],
    process: { mode: 'oneshot', output: { framing: 'lines' } },
  }
  const path = join(box, 'greet')
  writeFileSync(
    path,
    `#!/bin/sh\ncase "$1" in\ndescribe) cat <<'JSON'\n${JSON.stringify(document)}\nJSON\n;;\nrun) echo hello; echo note >&2 ;;\nesac\n`,
  )
  chmodSync(path, 0o755)
  return box
}

/**
 * A kernel with the runtime, the toolbox (loaded from `toolboxes`) and, when `bash` is given, the
 * bash plugin. After the test it is disposed and nothing it started may still run.
 */
async function compose(bash: Record<string, unknown> | undefined, toolboxes: string[] = []) {
  const kernel = new Kernel()
  kernel.use(describePlugin)
  kernel.use(launchNativePlugin)
  kernel.use(runtimePlugin, { stateDir: tempDir('tv-meta-state-'), spawner: 'native' })
  kernel.use(tasksPlugin)
  kernel.use(toolboxPlugin, { toolboxes })
  if (bash) kernel.use(bashPlugin, bash)
  await kernel.ready({ timeoutMs: 20_000 })
  const runId = (kernel.get(RuntimeToken) as Runtime).runId
  cleanups.push(async () => {
    await kernel.dispose()
    expect(await eventually(() => markedProcesses(runId).length === 0, 5000), 'processes left').toBe(true)
  })
  return { tools: kernel.get(ToolsToken)!, tasks: kernel.get(TasksToken)!, runId }
}

/**
 * `tools`, keeping each answer the registry gave: what the library handed the MCP server for one
 * call (and, for a call taken as a task, the task's answer), to compare with what the client got.
 */
function recording(tools: ToolRegistry) {
  const answers: ToolResult[] = []
  const taskAnswers: Array<Promise<ToolResult>> = []
  const registry: ToolRegistry = {
    register: (tool) => tools.register(tool),
    list: () => tools.list(),
    get: (name) => tools.get(name),
    safeName: (name) => tools.safeName(name),
    loadErrors: () => tools.loadErrors(),
    reportLoadError: (report) => tools.reportLoadError(report),
    onChange: (listener) => tools.onChange!(listener),
    async call(name, args, ctx) {
      const asTask = ctx.asTask
      const keep: ToolCallContext['asTask'] = asTask
        ? (task, answer) => {
            taskAnswers.push(answer)
            asTask(task, answer)
          }
        : undefined
      const seen: ToolCallContext = keep ? { ...ctx, asTask: keep } : ctx
      const answer = await tools.call(name, args, seen)
      answers.push(answer)
      return answer
    },
  }
  return { registry, answers, taskAnswers }
}

/**
 * An SDK client connected to `createMcpServer(tools)`, every message from the server to the client
 * carried as JSON text (as stdio and HTTP carry it). Closed after the test.
 */
async function wired(tools: ToolRegistry, options: { tasks?: TaskRegistry } = {}) {
  const surface = createMcpServer(tools, {
    name: 'toolvisor-meta',
    version: '0.0.0',
    sessionId: 'mcp',
    log: () => {},
    ...(options.tasks ? { tasks: options.tasks } : {}),
  })
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  const send = serverSide.send.bind(serverSide)
  serverSide.send = (message, opts) => send(JSON.parse(JSON.stringify(message)) as JSONRPCMessage, opts)
  await surface.connect(serverSide)
  const client = new Client({ name: 'meta-test', version: '0.0.0' })
  await client.connect(clientSide)
  cleanups.push(async () => {
    await client.close()
    await surface.close()
  })
  return client
}

describe('every meta field reaches the MCP client in _meta', () => {
  it.each(PROFILES)('$profile: MCP carries what the library result carries', async ({ bash, steps }) => {
    const { tools } = await compose(bash, bash ? [] : [greetBox()])
    const { registry, answers } = recording(tools)
    const client = await wired(registry)
    const ids = { library: '', mcp: '' }
    for (const step of steps) {
      const ctx: ToolCallContext = { sessionId: 'library', signal: new AbortController().signal }
      const library = await tools.call(step.tool, step.args(ids.library), ctx)
      expect(library.isError, `${step.what} (library): ${JSON.stringify(library.content)}`).toBe(false)
      expect(library.meta ?? {}, `${step.what}: the library result's meta`).toEqual(step.meta)

      const mcp = await client.callTool({ name: tools.safeName(step.tool), arguments: step.args(ids.mcp) })
      expect(mcp.isError, `${step.what} (MCP): ${JSON.stringify(mcp.content)}`).toBe(false)
      const served = answers.at(-1)!
      expect(metaFieldsOf(mcp), `${step.what}: MCP _meta, the answer the library gave the server`).toEqual(
        json(served.meta),
      )
      expect(metaFieldsOf(mcp), `${step.what}: MCP _meta`).toEqual(step.meta)

      ids.library = startedId(library) ?? ids.library
      ids.mcp = startedId(mcp as ToolResult) ?? ids.mcp
    }
  })

  it("toolnexus: a background call's backgroundId reaches the client in _meta.backgroundId, and names the shell", async () => {
    const { tools } = await compose({ profile: 'toolnexus', killGraceMs: 100 })
    const client = await wired(tools)
    const started = await client.callTool({
      name: 'bash',
      arguments: { command: 'sleep 30', run_in_background: true },
    })
    const id = startedId(started as ToolResult)
    expect(id).toBeDefined()
    expect(started._meta?.backgroundId).toBe(id)
    expect(started.content).toEqual([
      {
        type: 'text',
        text: `Started background shell ${id}. Read it with bash_output; stop it with kill_shell.`,
      },
    ])
    // The id in _meta is the one the other tools take.
    const killed = await client.callTool({
      name: 'kill_shell',
      arguments: { id: started._meta?.backgroundId },
    })
    expect(killed.content).toEqual([{ type: 'text', text: `Killed background shell ${id}` }])
    const read = await client.callTool({
      name: 'bash_output',
      arguments: { id: started._meta?.backgroundId },
    })
    expect(read.content).toEqual([{ type: 'text', text: '[status: killed]' }])
  })

  it("dsh taken as an MCP task: tasks/result carries the task answer's meta, as the library's", async () => {
    const { tools, tasks } = await compose({ profile: 'dsh' })
    const args = { command: 'echo out', description: d }
    let handed: Promise<ToolResult> | undefined
    const ctx: ToolCallContext = {
      sessionId: 'library',
      signal: new AbortController().signal,
      asTask: (_task, answer) => {
        handed = answer
      },
    }
    await tools.call('bash', args, ctx)
    const library = await handed!
    expect(library.meta).toEqual({ task: anId, stdoutSpill: aStdoutSpill })

    const { registry, taskAnswers } = recording(tools)
    const client = await wired(registry, { tasks })
    const created = await client.request(
      { method: 'tools/call', params: { name: 'bash', arguments: args, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
    )
    const taskId = created.task.taskId
    expect(
      await eventually(() => tasks.get(taskId, 'mcp').exit !== undefined, 20_000),
      'the task to end',
    ).toBe(true)
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)
    expect(result).toMatchObject({ content: [{ type: 'text', text: 'out\n' }], isError: false })
    expect(result._meta?.['io.modelcontextprotocol/related-task']).toEqual({ taskId })
    expect(metaFieldsOf(result)).toEqual(json((await taskAnswers[0]!).meta))
    expect(metaFieldsOf(result)).toEqual({ task: taskId, stdoutSpill: aStdoutSpill })
  })
})

describe('only JSON crosses, and the server keys win', () => {
  const cyclic: Record<string, unknown> = { name: 'loop' }
  cyclic.self = cyclic

  it('leaves out a field that is not JSON, never throws, and keeps the rest as JSON text has it', async () => {
    const tools = createToolRegistry()
    tools.register({
      name: 'odd',
      description: 'answers with odd meta',
      inputSchema: schema(),
      call: async () => ({
        content: [{ type: 'text', text: 'odd' }],
        isError: false,
        meta: {
          kept: 'yes',
          none: null,
          nested: { n: 1, nan: Number.NaN, gone: undefined, list: [1, Number.POSITIVE_INFINITY, () => 0] },
          at: new Date('2025-01-02T03:04:05.000Z'),
          missing: undefined,
          call: () => 'x',
          nan: Number.NaN,
          inf: Number.NEGATIVE_INFINITY,
          big: 10n,
          cyclic,
          symbol: Symbol('s'),
        },
      }),
    })
    const client = await wired(tools)
    const result = await client.callTool({ name: 'odd' })
    expect(result.content).toEqual([{ type: 'text', text: 'odd' }])
    expect(result._meta).toStrictEqual({
      kept: 'yes',
      none: null,
      nested: { n: 1, list: [1, null, null] },
      at: '2025-01-02T03:04:05.000Z',
    })
  })

  it("drops a meta field named like one of the server's keys: the server's own value wins", async () => {
    const tools = createToolRegistry()
    const answer = {
      content: [{ type: 'text' as const, text: 'x' }],
      isError: false,
      meta: { [PRESENTATION_META_KEY]: 'forged cards', 'toolvisor/progress': 'forged count', exitCode: 0 },
    }
    tools.register({
      name: 'plain',
      description: 'no cards',
      inputSchema: schema(),
      call: async () => answer,
    })
    tools.register({
      name: 'drawn',
      description: 'with cards',
      inputSchema: schema(),
      presentCall: () => ({ card: 'generic', title: 'drawn' }),
      call: async () => answer,
    })
    const client = await wired(tools)
    expect((await client.callTool({ name: 'plain' }))._meta).toStrictEqual({ exitCode: 0 })
    expect((await client.callTool({ name: 'drawn' }))._meta).toStrictEqual({
      exitCode: 0,
      [PRESENTATION_META_KEY]: { call: { card: 'generic', title: 'drawn' } },
    })
  })

  it('sends no _meta for a result without meta, or whose meta has nothing JSON', async () => {
    const tools = createToolRegistry()
    const answer = (meta?: Record<string, unknown>) => async (): Promise<ToolResult> => ({
      content: [{ type: 'text', text: 'x' }],
      isError: false,
      ...(meta ? { meta } : {}),
    })
    tools.register({ name: 'bare', description: 'no meta', inputSchema: schema(), call: answer() })
    tools.register({ name: 'empty', description: 'empty meta', inputSchema: schema(), call: answer({}) })
    tools.register({
      name: 'void',
      description: 'nothing JSON',
      inputSchema: schema(),
      call: answer({ f: () => 0 }),
    })
    const client = await wired(tools)
    for (const name of ['bare', 'empty', 'void']) {
      expect(await client.callTool({ name })).toStrictEqual({
        content: [{ type: 'text', text: 'x' }],
        isError: false,
      })
    }
  })
})
