import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import type { Readable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeAll, expect } from 'vitest'
import { reapGroups, waitFor } from './helpers.js'

/** The stdio fixture: a server over the built package, with tools that sleep, flood and answer big. */
export const fixture = fileURLToPath(new URL('./fixtures/serve-stdio.mjs', import.meta.url))
/** The tools the fixture serves, by the names clients see, in order. */
export const fixtureTools = ['say__hello', 'ticker', 'sleeper', 'flood', 'big', 'add__tool']

const dist = fileURLToPath(new URL('../dist/index.js', import.meta.url))

const children: ChildProcessWithoutNullStreams[] = []
/** Pids a test started some other way; `afterEach` kills them. */
export const pids: number[] = []

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

/** True while process `pid` exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** A stream's text as it arrives. */
export interface Collected {
  text(): string
  waitFor(re: RegExp): Promise<RegExpMatchArray>
}

/** Collects a stream's text; `text()` is what arrived so far. */
export function collect(stream: Readable): Collected {
  let buffer = ''
  stream.setEncoding('utf8')
  stream.on('data', (chunk: string) => {
    buffer += chunk
  })
  return {
    text: () => buffer,
    async waitFor(re) {
      await waitFor(() => re.test(buffer), 20_000, `${re} in the server's output`)
      return buffer.match(re)!
    },
  }
}

/** A JSON-RPC message as the server wrote it. */
export interface Message {
  readonly jsonrpc: string
  readonly id?: unknown
  readonly method?: string
  readonly params?: Record<string, unknown>
  readonly result?: Record<string, unknown>
  readonly error?: { code: number; message: string; data?: unknown }
}

/** The fixture as a subprocess with raw pipes. */
export interface RawServer {
  readonly child: ChildProcessWithoutNullStreams
  readonly stderr: Collected
  readonly exited: Promise<number | string>
  /** Writes one message as a line. */
  send(message: object): void
  /** Writes bytes as they are. */
  write(raw: string | Buffer): void
  /** Starts reading stdout (a test about a client that does not read calls it late, or never). */
  read(): void
  /** What the server wrote to stdout so far (once `read()`). */
  output(): string
  /** Every complete line the server wrote so far, parsed. */
  messages(): Message[]
  /** Waits for a message `match` accepts, and returns it. */
  waitForMessage(match: (message: Message) => boolean, what: string): Promise<Message>
  /** Sends `initialize` (with request id `id`) and `notifications/initialized`, and waits for the answer. */
  initialize(id?: string | number): Promise<Message>
}

/** The `initialize` request of a raw client. */
export const initializeRequest = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
}

/** Runs the fixture with `options` merged into its serveStdio options; stdout is read at once unless `read` is false. */
export function runFixture(options: object = {}, { read = true } = {}): RawServer {
  const child = spawn(process.execPath, [fixture], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, FIXTURE_OPTIONS: JSON.stringify(options) },
  })
  children.push(child)
  // A client that stops early makes our writes fail with EPIPE; the test looks at what happened instead.
  child.stdin.on('error', () => {})
  let stdout: Collected | undefined
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  )
  const messages = (): Message[] => {
    const text = stdout?.text() ?? ''
    return text
      .split('\n')
      .slice(0, -1)
      .map((line) => JSON.parse(line) as Message)
  }
  const server: RawServer = {
    child,
    stderr: collect(child.stderr),
    exited,
    send: (message) => child.stdin.write(`${JSON.stringify(message)}\n`),
    write: (raw) => child.stdin.write(raw),
    read() {
      stdout ??= collect(child.stdout)
    },
    output: () => stdout?.text() ?? '',
    messages,
    async waitForMessage(match, what) {
      await waitFor(() => messages().some(match), 20_000, what)
      return messages().find(match)!
    },
    async initialize(id = 0) {
      server.send({ ...initializeRequest, id })
      server.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
      return server.waitForMessage((m) => m.id === id, 'the initialize answer')
    },
  }
  if (read) server.read()
  return server
}

/** Bytes process `pid` has written so far (`wchar` of /proc/PID/io): what reached its pipes. */
export function bytesWritten(pid: number): number {
  const line = readFileSync(`/proc/${pid}/io`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('wchar:'))
  return Number(line?.slice('wchar:'.length) ?? 0)
}
