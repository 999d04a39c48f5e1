import { type ChildProcess, spawn } from 'node:child_process'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import { eventually } from '@toolvisor/process-runtime/testing'
import type { Tool, ToolCallContext, ToolRegistry, ToolResult } from '@toolvisor/toolbox'
import { createMcpServer, type McpServerOptions, type McpSurface } from '../src/index.js'

/** An object schema with the given string properties, all required. */
export function schema(...names: string[]): Tool['inputSchema'] {
  return {
    type: 'object',
    properties: Object.fromEntries(names.map((n) => [n, { type: 'string', description: n }])),
    required: names,
    additionalProperties: false,
  }
}

/** A tool from its name and call. */
export function tool(
  name: string,
  call: (args: unknown, ctx: ToolCallContext) => Promise<ToolResult>,
  description = `the ${name} tool`,
): Tool {
  return { name, description, inputSchema: schema(), call }
}

/** A text result. */
export function text(body: string, isError = false): ToolResult {
  return { content: [{ type: 'text', text: body }], isError }
}

/** A promise with its resolver outside. */
export function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void
  const promise = new Promise<T>((r) => {
    resolve = r
  })
  return { promise, resolve }
}

/** Process groups a test started; `afterEach` kills and checks them. */
export const groups = new Set<number>()

/** True while any process of group `pgid` exists. */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false
    throw error
  }
}

/** Waits until `check()` is true, failing after `ms`. */
export async function waitFor(check: () => boolean, ms = 5000, what = 'condition'): Promise<void> {
  if (!(await eventually(check, ms))) throw new Error(`timed out after ${ms} ms waiting for ${what}`)
}

/** Kills every group a test left behind and asserts that none remains. */
export async function reapGroups(): Promise<number[]> {
  const left = [...groups].filter(groupAlive)
  for (const pgid of left) {
    try {
      process.kill(-pgid, 'SIGKILL')
    } catch {}
  }
  for (const pgid of left) await waitFor(() => !groupAlive(pgid), 5000, `group ${pgid} to die`)
  groups.clear()
  return left
}

/** What the sleep tool saw during one call. */
export interface SleepProbe {
  /** Resolves with the child's process group id once `sleep` runs. */
  readonly started: Promise<number>
  /** Resolves with `ctx.signal.reason` when the call is aborted. */
  readonly aborted: Promise<unknown>
}

/**
 * A tool that runs `sleep 30` in its own process group and kills the group (SIGTERM) when the call
 * is aborted; it answers when the child exits.
 */
export function sleepTool(name = 'sleeper'): { tool: Tool; arm: () => SleepProbe } {
  let current = { started: deferred<number>(), aborted: deferred<unknown>() }
  const call = (_args: unknown, ctx: ToolCallContext): Promise<ToolResult> => {
    const seen = current
    return new Promise((resolve) => {
      const child: ChildProcess = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' })
      const pgid = child.pid!
      groups.add(pgid)
      const onAbort = (): void => {
        seen.aborted.resolve(ctx.signal.reason)
        try {
          process.kill(-pgid, 'SIGTERM')
        } catch {}
      }
      child.once('spawn', () => seen.started.resolve(pgid))
      child.once('exit', (code, signal) => {
        ctx.signal.removeEventListener('abort', onAbort)
        resolve(text(`sleep ended: ${signal ?? code}`, code !== 0))
      })
      if (ctx.signal.aborted) onAbort()
      else ctx.signal.addEventListener('abort', onAbort, { once: true })
    })
  }
  /** Watches the next call. */
  const arm = (): SleepProbe => {
    current = { started: deferred<number>(), aborted: deferred<unknown>() }
    return { started: current.started.promise, aborted: current.aborted.promise }
  }
  return { tool: tool(name, call, 'sleeps 30 s in its own process group'), arm }
}

/** A connected client and server over an in-memory pair, with what the server sent and logged. */
export interface Connected {
  readonly client: Client
  readonly surface: McpSurface
  /** Every JSON-RPC message the server sent. */
  readonly sent: JSONRPCMessage[]
  /** Every log line. */
  readonly logs: string[]
}

/** Connects an SDK client to `createMcpServer(tools)` in process. */
export async function connect(
  tools: ToolRegistry,
  options: Partial<McpServerOptions> = {},
): Promise<Connected> {
  const logs: string[] = []
  const sent: JSONRPCMessage[] = []
  const surface = createMcpServer(tools, {
    name: 'toolvisor-test',
    version: '1.2.3',
    log: (line) => logs.push(line),
    ...options,
  })
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  const send = serverSide.send.bind(serverSide)
  serverSide.send = (message, opts) => {
    sent.push(message)
    return send(message, opts)
  }
  await surface.connect(serverSide)
  const client = new Client({ name: 'test-client', version: '0.0.1' })
  await client.connect(clientSide)
  return { client, surface, sent, logs }
}
