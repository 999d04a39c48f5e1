// `toolvisor serve` to a 2026-07-28 client (issue 30's acceptance, decision 0109): the official v2
// client pinned to the revision lists, calls, follows a stream, talks to a service and gets a bash
// escalation approved through an `input_required` round, in the session `x-toolvisor-session`
// names. Two clients of one session, of either revision, see one set of processes; a client of
// another session, of either revision, sees none of them.
import { randomUUID } from 'node:crypto'
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { sandboxUserDir } from '@toolvisor/process-runtime/testing'
import { describe, expect, it } from 'vitest'
import { bin, tempDir } from './helpers.js'
import { hasBwrap, isRoot } from './sandbox-helpers.js'
import {
  bridgeArgs,
  serve,
  textOf,
  turn,
  clients as v1Clients,
  connect as v1Connect,
} from './serve-helpers.js'

/** A v2 client pinned to 2026-07-28 of the serve at `url`, in toolvisor session `session`. */
async function modern(url: string, token: string, session: string) {
  const client = new Client(
    { name: 'era-2026-serve', version: '0' },
    { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: '2026-07-28' } } },
  )
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { authorization: `Bearer ${token}`, 'x-toolvisor-session': session } },
  })
  await client.connect(transport)
  // Closed with the 2025 clients, before the servers (serve-helpers' afterEach).
  v1Clients.push(client as unknown as (typeof v1Clients)[number])
  expect(client.getProtocolEra()).toBe('modern')
  return client
}

/** One turn of a 2026-07-28 stdio client through the bridge `toolvisor mcp --connect ADDR --session NAME`. */
async function modernTurn(address: string, state: string, session: string, tag: string) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin, ...bridgeArgs(address, state, session)],
    env: { ...(process.env as Record<string, string>), TV_TEST_TAG: tag },
    stderr: 'pipe',
  })
  const client = new Client(
    { name: 'bridge-2026', version: '0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  )
  await client.connect(transport)
  v1Clients.push(client as unknown as (typeof v1Clients)[number])
  expect(client.getProtocolEra()).toBe('modern')
  return client
}

type Caller = { callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown> }

async function call(client: Caller, name: string, args: Record<string, unknown>): Promise<string> {
  return textOf(await client.callTool({ name, arguments: args }))
}

/** The handles of the processes `client`'s session owns, as `processes list` shows them. */
async function handles(client: Caller): Promise<string[]> {
  const listed = await call(client, 'processes', { command: 'list' })
  return [...listed.matchAll(/"process":"(\w+)"/g)].map((m) => m[1]!).sort()
}

describe('toolvisor serve to a 2026-07-28 client', () => {
  it('lists, calls, follows a stream and talks to a service, in the session it names; sessions stay apart in both eras', async () => {
    const server = await serve()
    const alpha = await modern(server.url, server.token, 'alpha')
    const names = (await alpha.listTools()).tools.map((t) => t.name)
    expect(names).toEqual(
      expect.arrayContaining(['echo_args', 'counter', 'log_watcher', 'log_watcher__send', 'processes']),
    )

    expect(await call(alpha, 'echo_args', { path: 'one', pattern: 'two', limit: 3, note: 'hi' })).toContain(
      '"one"',
    )

    // A stream, followed until it ends: each read goes on where the last ended.
    const started = JSON.parse(await call(alpha, 'counter', { to: 3, 'every-ms': 50 }))
    expect(started).toMatchObject({ status: 'running', task: 't1', tool: 'counter' })
    let followed = ''
    for (let i = 0; i < 40 && !followed.includes('"status":"exited (0)"'); i++) {
      followed += await call(alpha, 'processes', { command: 'read', process: 't1' })
      if (!followed.includes('"status":"exited (0)"'))
        await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(followed).toContain('"status":"exited (0)"')
    for (const n of [1, 2, 3]) expect(followed).toContain(`"n":${n}`)

    // A service, talked to on its stdin: the pattern changes what it reports.
    const dir = tempDir('tv-era-serve-')
    const log = join(dir, 'app.log')
    writeFileSync(log, '')
    expect(JSON.parse(await call(alpha, 'log_watcher', { file: log }))).toMatchObject({
      process: 'p1',
      status: 'running',
    })
    const sent = await call(alpha, 'log_watcher__send', {
      process: 'p1',
      event: { op: 'pattern', value: 'ERR' },
    })
    expect(sent).not.toMatch(/error/i)
    writeFileSync(log, 'fine\nERR one\n', { flag: 'a' })
    let mail = ''
    for (let i = 0; i < 20 && !mail.includes('ERR one'); i++) {
      mail += await call(alpha, 'processes', { command: 'wait', timeout_seconds: 2 })
    }
    expect(mail).toContain('"line":"ERR one"')
    expect(mail).not.toContain('"line":"fine"')

    // One session, two clients of each revision: one set of processes. Another session: none.
    const again = await modern(server.url, server.token, 'alpha')
    const old = (await v1Connect(server.url, server.token, undefined, 'alpha')).client
    expect(await handles(alpha)).toEqual(['p1', 't1'])
    expect(await handles(again)).toEqual(['p1', 't1'])
    expect(await handles(old)).toEqual(['p1', 't1'])
    const beta = await modern(server.url, server.token, 'beta')
    const betaOld = (await v1Connect(server.url, server.token, undefined, 'beta')).client
    const anon = (await v1Connect(server.url, server.token)).client
    for (const other of [beta, betaOld, anon]) {
      expect(await handles(other)).toEqual([])
      expect(await call(other, 'log_watcher__send', { process: 'p1', event: { op: 'stop' } })).toMatch(
        /task p1 belongs to another session/,
      )
    }
    // Still running, for alpha: nothing another session sent reached it.
    expect(await call(alpha, 'processes', { command: 'list' })).toMatch(
      /"process":"p1"[^}]*"status":"running"/,
    )
    server.child.kill('SIGTERM')
    expect(await server.exited).toBe(0)
  }, 60_000)

  it('serves a 2026-07-28 client through the bridge in its era; a 2025 turn of the same session sees its task, another session none', async () => {
    const server = await serve()
    const address = new URL(server.url).host
    const first = await modernTurn(address, server.state, 'agent-1', server.tag)
    const started = JSON.parse(await call(first, 'counter', { to: 100000, 'every-ms': 50 }))
    expect(started).toMatchObject({ status: 'running', task: 't1' })
    await first.close()
    const second = await turn(address, server.state, 'agent-1', server.tag)
    expect(await handles(second)).toEqual(['t1'])
    const other = await modernTurn(address, server.state, 'agent-2', server.tag)
    expect(await handles(other)).toEqual([])
    server.child.kill('SIGTERM')
    expect(await server.exited).toBe(0)
  })

  describe.skipIf(!hasBwrap || !isRoot)('as root, with bash under bwrap read-only', () => {
    it('gets an escalation approved through an input_required round; the command runs once, wider', async () => {
      const cwd = sandboxUserDir(import.meta.dirname, `era-serve-${randomUUID().slice(0, 8)}`)
      const server = await serve(
        [],
        '127.0.0.1:0',
        {},
        {
          config: { sandbox: 'bwrap', bash: { sandbox: 'read-only' } },
          cwd,
        },
      )
      try {
        const client = await modern(server.url, server.token, 'escalating')
        const asked: string[] = []
        client.setRequestHandler('elicitation/create', async (request) => {
          asked.push(String(request.params.message))
          return { action: 'accept', content: {} }
        })
        const marker = join(cwd, 'escalated')
        const plain = await client.callTool({
          name: 'bash',
          arguments: { command: `echo ran > ${marker}`, description: 'Write a marker' },
        })
        expect(textOf(plain)).toContain('Read-only file system')
        expect(existsSync(marker)).toBe(false)
        const allowed = await client.callTool({
          name: 'bash',
          arguments: {
            command: `echo ran > ${marker}`,
            description: 'Write a marker',
            sandbox_permissions: 'danger-full-access',
            justification: 'The test writes its marker file.',
          },
        })
        expect(allowed.isError).toBeFalsy()
        expect(readFileSync(marker, 'utf8')).toBe('ran\n')
        expect(asked).toHaveLength(1)
        expect(asked[0]).toContain(`echo ran > ${marker}`)
      } finally {
        rmSync(cwd, { recursive: true, force: true })
      }
    })
  })
})
