// `toolvisor serve` as the tests start it: its own state and tag, a free loopback port, and MCP
// clients over Streamable HTTP; after each test every server is gone and nothing it ran is left.
import { type ChildProcess, spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { eventually } from '@toolvisor/process-runtime/testing'
import { afterEach, expect } from 'vitest'
import { bin, examples, tagged, tempDir } from './helpers.js'

const servers: Array<{ child: ChildProcess; tag: string }> = []
export const clients: Client[] = []
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => {})
  for (const { child, tag } of servers.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    expect(await eventually(() => tagged(tag).length === 0, 3000), 'processes left running').toBe(true)
  }
})

/** `toolvisor serve` on a free loopback port (or `listen`) with its own state (or `setup.state`); resolves once it listens. */
export async function serve(
  extra: string[] = [],
  listen = '127.0.0.1:0',
  node: { args?: string[]; env?: Record<string, string> } = {},
  setup: {
    readonly config?: Record<string, unknown>
    readonly state?: string
    readonly cwd?: string
    /** Another build's `bin.js` (an upgrade's): the tests' own by default. */
    readonly bin?: string
  } = {},
) {
  const tag = randomUUID()
  const state = setup.state ?? tempDir('tv-serve-state-')
  const config = join(state, 'toolvisor.json')
  writeFileSync(config, JSON.stringify({ toolboxes: [examples], yieldMs: 0, ...setup.config }))
  const child = spawn(
    process.execPath,
    [
      ...(node.args ?? []),
      setup.bin ?? bin,
      'serve',
      '--listen',
      listen,
      '--config',
      config,
      '--state-dir',
      state,
      ...extra,
    ],
    {
      ...(setup.cwd ? { cwd: setup.cwd } : {}),
      env: { ...process.env, ...node.env, TV_TEST_TAG: tag },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  )
  servers.push({ child, tag })
  let stderr = ''
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  expect(await eventually(() => / at (http:\/\/\S+\/mcp|unix:\S+) /.test(stderr), 20_000), stderr).toBe(true)
  const url = / at (http:\/\/\S+\/mcp|unix:\S+) /.exec(stderr)![1]!
  const token = readFileSync(join(state, 'serve.token'), 'utf8').trim()
  return { child, tag, url, token, state, exited, stderr: () => stderr }
}

/** An MCP client of `url`: back in the MCP session `sessionId`, or in the toolvisor session `named`. */
export async function connect(url: string, token: string, sessionId?: string, named?: string) {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: {
      headers: { authorization: `Bearer ${token}`, ...(named ? { 'x-toolvisor-session': named } : {}) },
    },
    ...(sessionId ? { sessionId } : {}),
  })
  const client = new Client({ name: 'serve-test', version: '0' })
  await client.connect(transport)
  clients.push(client)
  return { client, transport }
}

export const textOf = (result: unknown) =>
  (result as { content: Array<{ text: string }> }).content.map((c) => c.text).join('\n')

/** The flags of `toolvisor mcp` as a bridge to the serve at `address` whose state directory is `state`, as `session`. */
export function bridgeFlags(address: string, state: string, session: string): string[] {
  return ['--connect', address, '--session', session, '--token-file', join(state, 'serve.token')]
}

/** The arguments of a bridge to the serve at `address` whose state directory is `state`, as `session`. */
export function bridgeArgs(address: string, state: string, session: string): string[] {
  return ['mcp', ...bridgeFlags(address, state, session)]
}

/** One turn of a stdio client: a bridge `toolvisor mcp --connect ADDR --session NAME`. */
export async function turn(address: string, state: string, session: string, tag: string) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin, ...bridgeArgs(address, state, session)],
    env: { ...(process.env as Record<string, string>), TV_TEST_TAG: tag },
    stderr: 'pipe',
  })
  const client = new Client({ name: 'bridge-test', version: '0' })
  await client.connect(transport)
  clients.push(client)
  return client
}

/** A call's text. */
export async function call(client: Client, name: string, args: Record<string, unknown>): Promise<string> {
  return textOf(await client.callTool({ name, arguments: args }))
}
