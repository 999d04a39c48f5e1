import { randomUUID } from 'node:crypto'
import { appendFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { afterEach, describe, expect, it } from 'vitest'
import { bin, expectNoneTagged, fixtures, tempDir } from './helpers.js'

// Issue 28 (the outside audit of 2026-12-01, D-3 and D-7), over the real MCP surface: `toolvisor
// mcp` and the SDK client, with echo_svc (a python service, digest {"per":"events","n":3}) and
// echo_round (the same, digest per round), which report each line added to their feed file.

const toolbox = join(fixtures, 'digest')
let tags: string[] = []
let clients: Client[] = []
afterEach(async () => {
  // Closed here too, so a failed test leaves nothing: the server exits at the end of its stdin.
  for (const client of clients) await client.close().catch(() => {})
  clients = []
  for (const tag of tags) await expectNoneTagged(tag)
  tags = []
})

type Content = { content: Array<{ type: string; text: string }>; isError?: boolean }

/** `toolvisor mcp` on the digest fixtures (with `config` as its toolvisor.json), once loaded. */
async function connect(config: Record<string, unknown> = {}) {
  const tag = randomUUID()
  tags.push(tag)
  const dir = tempDir('tv-digest-')
  const file = join(dir, 'toolvisor.json')
  writeFileSync(file, JSON.stringify({ toolboxes: [toolbox], ...config }))
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin, 'mcp', '--config', file, '--state-dir', join(dir, 'state')],
    env: { ...(process.env as Record<string, string>), TV_TEST_TAG: tag },
    stderr: 'pipe',
  })
  let stderr = ''
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')))
  const client = new Client({ name: 'toolvisor-digest-test', version: '0.0.0' })
  clients.push(client)
  await client.connect(transport)
  await until(() => stderr.includes('toolvisor: toolboxes loaded in '), 20_000)
  const call = async (name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as Content
  const feed = join(dir, 'feed')
  writeFileSync(feed, '')
  const add = (...lines: string[]) => appendFileSync(feed, lines.map((line) => `${line}\n`).join(''))
  return { client, call, feed, add, tag }
}

async function until(check: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await check()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
  expect(await check()).toBe(true)
}

/**
 * The mail in results, in order, each envelope as its kind and the events it carries: the
 * `[mail ...]` blocks folded into any result, and the envelopes of a `processes wait` answer.
 */
function mailIn(results: readonly Content[]): Array<{ kind: string; events: unknown[]; text: string }> {
  const mail = []
  const eventsOf = (kind: string, body: unknown) =>
    kind === 'digest' ? body : kind === 'event' ? [body] : []
  for (const result of results) {
    for (const [index, { text }] of result.content.entries()) {
      const block = /^\[mail \S+ from \S+\] (?:(\d+) events[^:]*: |(completion|control): )?(.*)$/s.exec(text)
      if (block) {
        const body = JSON.parse(block[3]!)
        const kind = block[2] ?? (block[1] ? 'digest' : 'event')
        mail.push({ kind, events: eventsOf(kind, body) as unknown[], text })
      } else if (index === 0 && text.startsWith('{"mail":')) {
        for (const m of JSON.parse(text).mail as Array<{ kind: string; body: unknown }>)
          mail.push({ kind: m.kind, events: eventsOf(m.kind, m.body) as unknown[], text: JSON.stringify(m) })
      }
    }
  }
  return mail
}

/** The `processes status` of p1, as JSON, and the whole result (a delivery point like any other). */
async function status(call: (name: string, args: Record<string, unknown>) => Promise<Content>) {
  const result = await call('processes', { command: 'status', process: 'p1' })
  return { body: JSON.parse(result.content[0]!.text), result }
}

/** `processes wait` until the mail holds what `done` wants (each wait returns at the mail, or at 2 s). */
async function waitFor(
  call: (name: string, args: Record<string, unknown>) => Promise<Content>,
  seen: Content[],
  done: (mail: ReturnType<typeof mailIn>) => boolean,
) {
  const deadline = Date.now() + 20_000
  while (!done(mailIn(seen)) && Date.now() < deadline)
    seen.push(await call('processes', { command: 'wait', timeout_seconds: 2 }))
  return mailIn(seen)
}

describe('digest {"per":"events","n":3} over MCP (issue 28, D-3)', () => {
  it('mails no 1-event envelope at a delivery point, shows it pending, mails 3 as one, and the exit mails the rest', async () => {
    const { client, call, feed, add } = await connect()
    const started = await call('echo_svc', { feed })
    expect(JSON.parse(started.content[0]!.text)).toMatchObject({ process: 'p1', status: 'running' })

    add('one')
    // Every result folds mail: none of these may carry a 1-event envelope of echo_svc.
    const seen: Content[] = [started]
    await until(async () => {
      const now = await status(call)
      seen.push(now.result)
      return now.body.counters.events === 1
    }, 15_000)
    const pending = await status(call)
    seen.push(pending.result)
    expect(mailIn(seen)).toEqual([])
    expect(pending.body.mail).toEqual({ digest: { per: 'events', n: 3 }, pending: 1 })
    // A send is a delivery point too, and its reply counts toward no digest.
    const sent = await call('echo_svc__send', { process: 'p1', event: { op: 'echo', text: 'hi' } })
    seen.push(sent)
    expect(JSON.parse(sent.content[0]!.text)).toEqual({ accepted: true, events: [{ reply: 'hi' }] })
    seen.push(await call('processes', { command: 'list' }))
    expect(mailIn(seen)).toEqual([])
    expect((await status(call)).body.mail.pending).toBe(1)

    add('two', 'three')
    const three = await waitFor(call, seen, (mail) => mail.length > 0)
    expect(three.map((m) => [m.kind, m.events])).toEqual([
      ['digest', [{ line: 'one' }, { line: 'two' }, { line: 'three' }]],
    ])

    add('four')
    await until(async () => (await status(call)).body.mail.pending === 1, 15_000)
    // It exits by itself: the remainder is mailed, then its end.
    const exit = await call('echo_svc__send', { process: 'p1', event: { op: 'exit', code: 0 } })
    const end = [exit]
    const rest = await waitFor(call, end, (mail) => mail.some((m) => m.kind === 'completion'))
    expect(rest.map((m) => [m.kind, m.events])).toEqual([
      ['event', [{ line: 'four' }]],
      ['completion', []],
    ])
    await client.close()
  })

  it('mails the remainder when the operator’s bound (digestFlushMs) passes', async () => {
    const { client, call, feed, add } = await connect({ digestFlushMs: 400 })
    await call('echo_svc', { feed })
    add('alone')
    const mail = await waitFor(call, [], (got) => got.length > 0)
    expect(mail.map((m) => [m.kind, m.events])).toEqual([['event', [{ line: 'alone' }]]])
    expect((await status(call)).body).toMatchObject({ status: 'running', mail: { pending: 0 } })
    await client.close()
  })
})

describe('a send’s reply over MCP (issue 28, D-7)', () => {
  it('is the events of its answer and no mail envelope; an event after the window is mail', async () => {
    const { client, call, feed, add } = await connect()
    await call('echo_round', { feed })
    const sent = await call('echo_round__send', { process: 'p1', event: { op: 'echo', text: 'hi there' } })
    expect(sent.content.map((c) => c.text)).toEqual(['{"accepted":true,"events":[{"reply":"hi there"}]}'])
    const next = await call('processes', { command: 'list' })
    expect(mailIn([sent, next])).toEqual([])

    add('unasked')
    const mail = await waitFor(call, [], (got) => got.length > 0)
    expect(mail.map((m) => [m.kind, m.events])).toEqual([['event', [{ line: 'unasked' }]]])
    const tail = JSON.parse((await call('processes', { command: 'tail', process: 'p1' })).content[0]!.text)
    expect(tail.events).toEqual([{ reply: 'hi there' }, { line: 'unasked' }])
    await client.close()
  })
})
