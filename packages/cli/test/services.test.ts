import { randomUUID } from 'node:crypto'
import { appendFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { bin, examples, expectNoneTagged, run, taggedCommands, tempDir } from './helpers.js'
import { ERAS, type Era, stdioClient } from './mcp-eras.js'

let tags: string[] = []
afterEach(async () => {
  for (const tag of tags) await expectNoneTagged(tag)
  tags = []
})

type Content = { content: Array<{ type: string; text: string }>; isError?: boolean }

/** An SDK client of `era` on `toolvisor mcp --toolbox examples/tools`, once its toolboxes are loaded. */
async function connect(era: Era) {
  const tag = randomUUID()
  tags.push(tag)
  let stderr = ''
  const { client } = await stdioClient(
    era,
    {
      command: process.execPath,
      args: [bin, 'mcp', '--toolbox', examples, '--state-dir', tempDir('tv-svc-state-')],
      env: { ...(process.env as Record<string, string>), TV_TEST_TAG: tag },
      stderr: 'pipe',
    },
    (chunk) => {
      stderr += chunk.toString('utf8')
    },
  )
  const notices: string[] = []
  await client.watchMail((said) => void notices.push(said))
  await until(() => stderr.includes('toolvisor: toolboxes loaded in '), 20_000)
  const call = async (name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as Content
  return { client, call, notices, tag, stderr: () => stderr }
}

async function until(check: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
  expect(check()).toBe(true)
}

/** One envelope as a result carries it: folded as a `[mail ...]` block, or in `processes wait`'s JSON. */
interface Got {
  readonly id: string
  readonly from: string
  readonly kind: string
  readonly events: unknown[]
  readonly body: unknown
}

/** Every envelope in these results, in order: `processes wait` answers first, then the folded blocks. */
function mailIn(results: readonly Content[]): Got[] {
  const got: Got[] = []
  for (const result of results) {
    for (const [index, { text }] of result.content.entries()) {
      const block = /^\[mail (\S+) from (\S+)\] (?:(\d+) events[^:]*: |(completion|control): )?(.*)$/s.exec(
        text,
      )
      if (block) {
        const body = JSON.parse(block[5]!)
        const kind = block[4] ?? (block[3] ? 'digest' : 'event')
        const events = kind === 'digest' ? body : kind === 'event' ? [body] : []
        got.push({ id: block[1]!, from: block[2]!, kind, events, body })
      } else if (index === 0 && text.startsWith('{"mail":')) {
        for (const m of JSON.parse(text).mail) {
          const events = m.kind === 'digest' ? m.body : m.kind === 'event' ? [m.body] : []
          got.push({ id: m.id, from: m.from, kind: m.kind, events, body: m.body })
        }
      }
    }
  }
  return got
}

/** The lines of the log_watcher events in the mail, by sender. */
function linesIn(results: readonly Content[]): Record<string, string[]> {
  const lines: Record<string, string[]> = {}
  for (const mail of mailIn(results)) {
    for (const event of mail.events as Array<{ line?: string }>) {
      if (typeof event.line === 'string') lines[mail.from] = [...(lines[mail.from] ?? []), event.line]
    }
  }
  return lines
}

describe.each(ERAS)('services over MCP, with the SDK client speaking %s (spec §3 end to end)', (era) => {
  it('starts log_watcher twice, mails matches from the right handle, sends, lists, stops, and the close stops the rest', async () => {
    const { client, call, notices, tag } = await connect(era)
    const names = (await client.listTools()).tools.map((t) => t.name)
    expect(names).toEqual(expect.arrayContaining(['log_watcher', 'log_watcher__send', 'processes']))
    const dir = tempDir('tv-svc-logs-')
    const [a, b] = [join(dir, 'a.log'), join(dir, 'b.log')]
    writeFileSync(a, '')
    writeFileSync(b, '')
    const p1 = await call('log_watcher', { file: a, pattern: 'ERROR' })
    const p2 = await call('log_watcher', { file: b, pattern: 'ERROR' })
    expect(JSON.parse(p1.content[0]!.text)).toEqual({
      process: 'p1',
      tool: 'log_watcher',
      status: 'running',
      since: expect.any(String),
    })
    expect(JSON.parse(p2.content[0]!.text)).toMatchObject({ process: 'p2', status: 'running' })

    // Mail waits: a logging notice says so, and the next result of any tool carries it.
    appendFileSync(a, 'ERROR disk full\nall fine\n')
    appendFileSync(b, 'ERROR replica lag\n')
    await until(() => notices.length > 0, 15_000)
    // Told between results: a logging notice (2025), the mail resource's update (2026).
    if (era === '2025-11-25')
      expect(notices[0]).toMatch(/^\[mail waiting from process:p[12]\] it comes with the next tool result/)
    else expect(notices[0]).toBe('toolvisor://mail')
    const folded = await call('processes', { command: 'list' })
    expect(folded.content.length).toBeGreaterThan(1)
    expect(folded.content[1]!.text).toMatch(/^\[mail m\d+ from process:p[12]\] /)
    const first = await collect(call, [folded], { 'process:p1': 1, 'process:p2': 1 })
    expect(first).toEqual({ 'process:p1': ['ERROR disk full'], 'process:p2': ['ERROR replica lag'] })

    // The send changes p1 alone; an invalid one is refused and writes nothing.
    const sent = await call('log_watcher__send', { process: 'p1', event: { op: 'pattern', value: 'WARN' } })
    expect(JSON.parse(sent.content[0]!.text)).toEqual({
      accepted: true,
      events: [{ notice: 'pattern is now /WARN/' }],
    })
    const refused = await call('log_watcher__send', { process: 'p2', event: { op: 'louder' } })
    expect(refused.isError).toBe(true)
    expect(JSON.parse(refused.content[0]!.text).error).toBe(
      `log_watcher.send: the event does not match log_watcher's input.event: $.event.op: must be equal to one of the allowed values: "pattern", "pause", "resume", "stop"; nothing was written, p2 is untouched`,
    )
    appendFileSync(a, 'WARN cache cold\nERROR not for p1 now\n')
    appendFileSync(b, 'WARN not for p2\nERROR replica down\n')
    const second = await collect(call, [], { 'process:p1': 1, 'process:p2': 1 })
    expect(second).toEqual({ 'process:p1': ['WARN cache cold'], 'process:p2': ['ERROR replica down'] })

    const list = JSON.parse((await call('processes', { command: 'list' })).content[0]!.text)
    expect(list.processes.map((p: Record<string, string>) => [p.process, p.tool, p.kind, p.status])).toEqual([
      ['p1', 'log_watcher', 'service', 'running'],
      ['p2', 'log_watcher', 'service', 'running'],
    ])
    const status = JSON.parse(
      (await call('processes', { command: 'status', process: 'p2' })).content[0]!.text,
    )
    expect(status).toMatchObject({ process: 'p2', status: 'running', counters: { stdinEvents: 0 } })
    expect(status.input.properties.op).toEqual({ enum: ['pattern', 'pause', 'resume', 'stop'] })
    const tail = JSON.parse((await call('processes', { command: 'tail', process: 'p1' })).content[0]!.text)
    expect(tail.events).toEqual([
      { file: a, n: 1, line: 'ERROR disk full' },
      { notice: 'pattern is now /WARN/' },
      { file: a, n: 3, line: 'WARN cache cold' },
    ])

    // Stopped with its declared cancel ({"send": {"op": "stop"}}): it exits 0 by itself.
    const stop = await call('processes', { command: 'stop', process: 'p1' })
    expect(JSON.parse(stop.content[0]!.text)).toEqual({
      process: 'p1',
      status: 'exited',
      exitCode: 0,
      signal: null,
      reason: 'cancelled',
    })
    // The stop's answer showed the end: its completion is not mailed on top (decision 0104).
    const ended = mailIn([
      stop,
      await call('processes', { command: 'wait', process: 'p1', timeout_seconds: 1 }),
    ])
    expect(ended.filter((m) => m.kind === 'completion')).toEqual([])
    const watchers = () => taggedCommands(tag).filter((command) => command.includes('log-watcher run'))
    expect(watchers()).toHaveLength(1)

    // The client leaves: its session closes and stops p2, then the server exits.
    await client.close()
    await until(() => watchers().length === 0, 10_000)
  })
})

type Call = Awaited<ReturnType<typeof connect>>['call']

/** Calls `processes wait` until the mail holds `want` lines per sender (or 15 s passed); the lines. */
async function collect(
  call: Call,
  seen: Content[],
  want: Record<string, number>,
): Promise<Record<string, string[]>> {
  const enough = () => Object.entries(want).every(([from, n]) => (linesIn(seen)[from]?.length ?? 0) >= n)
  const deadline = Date.now() + 15_000
  while (!enough() && Date.now() < deadline)
    seen.push(await call('processes', { command: 'wait', timeout_seconds: 2 }))
  return linesIn(seen)
}

describe('toolvisor call of a service', () => {
  it('prints the handle, then stops the service with its declared cancel and says why on stderr', async () => {
    const dir = tempDir('tv-svc-call-')
    writeFileSync(join(dir, 'x.log'), '')
    const called = await run([
      'call',
      join(examples, 'log-watcher'),
      JSON.stringify({ file: join(dir, 'x.log') }),
      '--state-dir',
      join(dir, 'state'),
    ])
    expect(called.code).toBe(0)
    expect(JSON.parse(called.stdout)).toMatchObject({ process: 'p1', tool: 'log_watcher', status: 'running' })
    expect(called.stderr).toContain(
      'toolvisor call: p1 is a service, which cannot outlive this command: it was stopped with its declared cancel (exit code 0) after 0 events.',
    )
  })
})
