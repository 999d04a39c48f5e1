import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { readConfig } from '../src/config.js'
import { eventually, run, startedId, tempDir } from './helpers.js'
import { harness, journaled, pidOf } from './notify-helpers.js'
import { call, serve, turn } from './serve-helpers.js'

describe('serve --notify: keyed items for the harness', () => {
  it('two bridge turns: one running and one done per task that outlived its call, a clear when seen, nothing for inline results', async () => {
    const endpoint = await harness()
    const socket = join(tempDir('tv-notify-serve-'), 'serve.sock')
    const server = await serve(
      ['--notify', `unix:${endpoint.path}`],
      `unix:${socket}`,
      {},
      {
        config: { yieldMs: 10_000, bash: { profile: 'hyperhive' } },
      },
    )
    const log = join(tempDir('tv-notify-log-'), 'app.log')
    writeFileSync(log, '')
    const first = await turn(`unix:${socket}`, server.state, 'agent-1', server.tag)
    expect(JSON.parse(await call(first, 'log_watcher', { file: log }))).toMatchObject({ process: 'p1' })
    // Results that came back inline: a run waited for, a stream call that ended in its window.
    const inline = JSON.parse(await call(first, 'run', { cmd: 'echo inline', wait_seconds: 10 }))
    expect(inline).toMatchObject({ status: 'done' })
    expect(await call(first, 'counter', { to: 3, 'every-ms': 5 })).toMatch(/^\[\{"n":1/)
    // Running, then waited for inline: its end is no news.
    const t3 = startedId(await call(first, 'run', { cmd: 'sleep 0.5', wait_seconds: 0 }))
    expect(await eventually(() => endpoint.of(t3).length === 1)).toBe(true)
    expect(await call(first, 'status', { id: t3, wait_seconds: 10 })).toContain('"status":"done"')
    const t4 = startedId(await call(first, 'run', { cmd: 'sleep 1; echo bg-done', wait_seconds: 0 }))
    await first.close()
    // Meanwhile: the shell ends, the service reports a line and then dies on its own.
    expect(await eventually(() => endpoint.of(t4).includes('done'), 10_000)).toBe(true)
    writeFileSync(log, 'ERROR while away\n', { flag: 'a' })
    expect(await eventually(() => journaled(server.state, 'ERROR while away'), 10_000)).toBe(true)
    process.kill(pidOf(server.tag, 'log-watcher'), 'SIGTERM')
    expect(await eventually(() => endpoint.of('p1').includes('done'), 10_000)).toBe(true)

    const second = await turn(`unix:${socket}`, server.state, 'agent-1', server.tag)
    const mail: Array<{ from: string; kind: string; body: { line?: string } }> = []
    for (let i = 0; i < 10 && !mail.some((m) => m.from === 'process:p1' && m.kind === 'completion'); i++)
      mail.push(...JSON.parse(await call(second, 'processes', { command: 'wait', timeout_seconds: 3 })).mail)
    expect(mail.some((m) => m.from === 'process:p1' && m.body.line === 'ERROR while away')).toBe(true)
    expect(mail.some((m) => m.from === `task:${t4}` && m.kind === 'completion')).toBe(true)
    const listed = JSON.parse(await call(second, 'processes', { command: 'list' })).processes
    expect(listed.filter((p: { process: string }) => [t4, 'p1'].includes(p.process))).toMatchObject([
      { process: 'p1', kind: 'service', status: 'exited (0)' },
      { process: t4, kind: 'bash', status: 'exited (0)' },
    ])
    expect(await eventually(() => endpoint.of(t4).length === 3 && endpoint.of('p1').length === 3)).toBe(true)
    // The inline run, and the counter (t1: bash tasks are not counted among the t ids).
    expect([inline.id, 'p1', 't1', t3, t4].map((key) => endpoint.of(key))).toEqual([
      [],
      ['running', 'done', 'clear'],
      [],
      ['running', 'clear'],
      ['running', 'done', 'clear'],
    ])
    const items = endpoint.items.filter((item) => item.key === t4)
    expect(items[1]).toMatchObject({
      v: 1,
      op: 'set',
      state: 'done',
      session: 'agent-1',
      summary: 'bash (sleep 1; echo bg-done): exited (0)',
      task: { kind: 'bash', tool: 'bash', label: 'sleep 1; echo bg-done' },
    })
    expect(endpoint.items.map((item) => item.seq)).toEqual(endpoint.items.map((_, i) => i + 1))
    server.child.kill('SIGTERM')
    expect(await server.exited).toBe(0)
  }, 60_000)
})

describe('where the items go', () => {
  it('takes unix:PATH (relative to toolvisor.json) or an http(s) URL, and refuses anything else where it was written', async () => {
    const dir = tempDir('tv-notify-config-')
    const file = join(dir, 'toolvisor.json')
    writeFileSync(file, JSON.stringify({ serve: { notify: 'unix:run/items.sock' } }))
    expect(readConfig(file).serve?.notify).toBe(`unix:${join(dir, 'run/items.sock')}`)
    writeFileSync(file, JSON.stringify({ serve: { notify: 'https://harness.local/items' } }))
    expect(readConfig(file).serve?.notify).toBe('https://harness.local/items')
    writeFileSync(file, JSON.stringify({ serve: { notify: 'ftp://harness.local/items' } }))
    expect(() => readConfig(file)).toThrow(
      `${file}: $.serve.notify: expected unix:PATH (a unix stream socket) or an http:// or https:// URL`,
    )
    const flag = await run(['serve', '--listen', '127.0.0.1:0', '--notify', 'unix:'])
    expect(flag.code).toBe(2)
    expect(flag.stderr).toBe(
      'toolvisor serve: --notify unix:: expected unix:PATH (a unix stream socket) or an http:// or https:// URL\n',
    )
  })
})
