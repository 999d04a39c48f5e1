// A real runtime, task registry and sessions behind `serveHttp` with the page mounted at /ui:
// what `toolvisor serve` composes, without the CLI. Processes are real (`/bin/sh` scripts); after
// each test the server and runtime are closed and none of its processes is left.
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { nativeSpawner } from '@toolvisor/launch-native'
import { serveHttp } from '@toolvisor/mcp-server'
import { createLaunchers, type ManagedProcess, markedProcesses, Runtime } from '@toolvisor/process-runtime'
import { eventually } from '@toolvisor/process-runtime/testing'
import { createSessions, createTaskRegistry, stopOwnedTasks, type TaskInfo } from '@toolvisor/tasks'
import { createToolRegistry } from '@toolvisor/toolbox'
import { afterEach, expect } from 'vitest'
import { type OperatorPageOptions, operatorPage } from '../src/index.js'

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

/** A page over a fresh runtime (events ring of 16, 1 KiB in memory per stream: paging reads the spill files). */
export async function setup(
  options: Partial<
    Pick<OperatorPageOptions, 'control' | 'maxStreams' | 'mail' | 'restartsOf' | 'tokenFile'>
  > = {},
) {
  const stateDir = mkdtempSync(join(tmpdir(), 'tv-ui-state-'))
  const runtime = new Runtime(
    { stateDir, ringEvents: 16, resultBytes: 1024, spawner: nativeSpawner() },
    createLaunchers(),
  )
  const tasks = createTaskRegistry(runtime)
  const sessions = createSessions()
  sessions.onClose((session) => stopOwnedTasks(tasks, session.id))
  const token = randomBytes(24).toString('hex')
  const log: string[] = []
  const page = operatorPage({ token, sessions, tasks, log: (line) => log.push(line), ...options })
  const http = await serveHttp(createToolRegistry(), {
    name: 'ui-test',
    version: '0',
    listen: { host: '127.0.0.1', port: 0 },
    token,
    sessions,
    routes: new Map([['/ui', page]]),
    log: () => {},
  })
  cleanups.push(async () => {
    await http.close()
    page.close()
    await runtime.dispose()
    expect(await eventually(() => markedProcesses(runtime.runId).length === 0, 3000), 'processes left').toBe(
      true,
    )
    rmSync(stateDir, { recursive: true, force: true })
  })
  const sh = await runtime.preparePlain({ name: 'sh', file: '/bin/sh', mode: 'stream', framing: 'jsonl' })
  const tty = await runtime.preparePlain({ name: 'sh', file: '/bin/sh', mode: 'stream', framing: 'chunks' })
  const add = (owner: string | undefined, process: ManagedProcess): TaskInfo =>
    tasks.add({ kind: 'stream', tool: 'sh', ...(owner !== undefined ? { owner } : {}), process })
  /** A stream task of `owner` running `script` under /bin/sh. */
  const start = (owner: string | undefined, script: string): TaskInfo =>
    add(owner, runtime.start({ tool: sh, argv: ['-c', script] }))
  /** A stream task of `owner` running `script` under /bin/sh on an 80x24 terminal. */
  const startOnTerminal = (owner: string | undefined, script: string): TaskInfo =>
    add(owner, runtime.start({ tool: tty, argv: ['-c', script], terminal: { columns: 80, rows: 24 } }))
  const base = http.url.replace(/\/mcp$/, '')
  const bearer = { authorization: `Bearer ${token}` }
  return { runtime, tasks, sessions, token, log, base, bearer, start, startOnTerminal }
}

/** One server-sent event. */
export interface Message {
  readonly event: string
  readonly data: unknown
  readonly id?: string
}

/** Reads an event stream as it comes; `close()` ends it. */
export async function sse(url: string, headers: Record<string, string>) {
  const controller = new AbortController()
  const response = await fetch(url, { headers, signal: controller.signal })
  const messages: Message[] = []
  const stream = { response, messages, ended: false, close: () => controller.abort() }
  cleanups.push(() => controller.abort())
  if (!response.ok || response.body === null) return stream
  const reader = response.body.getReader()
  const decoder = new TextDecoder()
  let buffer = ''
  void (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read()
        if (done) break
        buffer += decoder.decode(value, { stream: true })
        for (let at = buffer.indexOf('\n\n'); at >= 0; at = buffer.indexOf('\n\n')) {
          const message = parse(buffer.slice(0, at))
          buffer = buffer.slice(at + 2)
          if (message) messages.push(message)
        }
      }
    } catch {
      // aborted
    }
    stream.ended = true
  })()
  return stream
}

function parse(frame: string): Message | undefined {
  const fields = new Map<string, string>()
  for (const line of frame.split('\n')) {
    if (line.startsWith(':')) continue
    const at = line.indexOf(': ')
    if (at > 0) fields.set(line.slice(0, at), line.slice(at + 2))
  }
  const event = fields.get('event')
  if (event === undefined) return undefined
  const id = fields.get('id')
  return { event, data: JSON.parse(fields.get('data') ?? 'null'), ...(id !== undefined ? { id } : {}) }
}
