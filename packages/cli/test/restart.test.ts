import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { describe, expect, it } from 'vitest'
import { eventually, examples, fixtures, startedId, tagged, tempDir } from './helpers.js'
import { commandOf, harness, journaled } from './notify-helpers.js'
import { call, serve, turn } from './serve-helpers.js'

interface Mail {
  readonly id: string
  readonly from: string
  readonly kind: string
  readonly body: { readonly line?: string; readonly status?: string }
}

/** Every envelope the session has unread: `processes wait` until one comes back empty. */
async function unread(client: Client): Promise<Mail[]> {
  const mail: Mail[] = []
  for (let i = 0; i < 20; i++) {
    const page = JSON.parse(await call(client, 'processes', { command: 'wait', timeout_seconds: 1 })).mail
    if (page.length === 0) return mail
    mail.push(...page)
  }
  throw new Error('mail without end')
}

/** Whether a pid is a live process (a zombie is dead, only not yet reaped). */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))
  } catch {
    return false
  }
}

describe('toolvisor serve after a kill -9', () => {
  it('leaves no old process; a session that comes back is told of its lost services and gets its unread mail, once', async () => {
    const socket = join(tempDir('tv-restart-'), 'serve.sock')
    const address = `unix:${socket}`
    const config = { bash: { profile: 'hyperhive' } }
    const first = await serve([], address, {}, { config })
    const log = join(tempDir('tv-restart-log-'), 'app.log')
    writeFileSync(log, '')
    const agent = await turn(address, first.state, 'agent-1', first.tag)
    for (const handle of ['p1', 'p2', 'p3'])
      expect(JSON.parse(await call(agent, 'log_watcher', { file: log }))).toMatchObject({ process: handle })
    const t1 = startedId(await call(agent, 'run', { cmd: 'echo unread-bash', wait_seconds: 0 }))
    await agent.close()
    writeFileSync(log, 'ERROR before the crash\n', { flag: 'a' })
    // The mail is accepted (in the journal) before the crash: three services' lines, the shell's end.
    const lines = () =>
      readFileSync(join(first.state, 'mail', 'mail.journal'), 'utf8').split('ERROR before').length - 1
    expect(await eventually(() => journaled(first.state, `done-${t1}`) && lines() >= 3, 10_000)).toBe(true)
    const services = tagged(first.tag).filter((pid) => commandOf(pid).includes('log-watcher'))
    expect(services).toHaveLength(3)
    first.child.kill('SIGKILL')
    await first.exited
    expect(await eventually(() => !services.some(alive), 5000), 'an old service is alive').toBe(true)
    expect(await eventually(() => tagged(first.tag).length === 0, 5000)).toBe(true)

    const endpoint = await harness()
    const second = await serve(
      ['--notify', `unix:${endpoint.path}`],
      address,
      {},
      { config, state: first.state },
    )
    expect(second.stderr()).toContain(
      'toolvisor: an earlier run ended with 3 process(es) running; they are stopped and reported lost: p1 log_watcher (session agent-1), p2 log_watcher (session agent-1), p3 log_watcher (session agent-1)',
    )
    const back = await turn(address, second.state, 'agent-1', second.tag)
    const mail = await unread(back)
    expect(new Set(mail.map((m) => m.id)).size).toBe(mail.length)
    const lost = mail.filter((m) => m.id.startsWith('lost-'))
    expect(lost.map((m) => [m.from, m.kind, m.body.status])).toEqual(
      ['p1', 'p2', 'p3'].map((p) => [`task:${p}`, 'completion', 'failed: lost on restart']),
    )
    const seen = mail.filter((m) => m.body.line === 'ERROR before the crash').map((m) => m.from)
    expect(seen.sort()).toEqual(['process:p1', 'process:p2', 'process:p3'])
    expect(mail.filter((m) => m.from === `task:${t1}` && m.kind === 'completion')).toHaveLength(1)
    // The harness's items of the lost services end when their owner is told, and clear once read.
    expect(await eventually(() => ['p1', 'p2', 'p3'].every((key) => endpoint.of(key).length === 2))).toBe(
      true,
    )
    expect(['p1', 'p2', 'p3'].map((key) => endpoint.of(key))).toEqual(Array(3).fill(['done', 'clear']))
    expect(endpoint.items.find((item) => item.key === 'p1')?.summary).toBe(
      'log_watcher: failed: lost on restart',
    )
    const listed = JSON.parse(await call(back, 'processes', { command: 'list' })).processes
    // The shell ended in the old run: its end is in the mail, not in this run's list.
    expect(listed.map((p: { process: string; status: string }) => `${p.process} ${p.status}`)).toEqual([
      'p1 failed: lost on restart',
      'p2 failed: lost on restart',
      'p3 failed: lost on restart',
    ])
    await back.close()
    const later = await turn(address, second.state, 'agent-1', second.tag)
    expect(await unread(later)).toEqual([])
    second.child.kill('SIGTERM')
    expect(await second.exited).toBe(0)
    // Told once: a third start keeps the loss in the list, and tells nothing again.
    const third = await serve([], address, {}, { config, state: first.state })
    expect(third.stderr()).not.toContain('an earlier run ended')
    const once = await turn(address, third.state, 'agent-1', third.tag)
    expect(await unread(once)).toEqual([])
    third.child.kill('SIGTERM')
    expect(await third.exited).toBe(0)
  }, 90_000)
})

describe('toolvisor serve killed while a service waits to restart', () => {
  for (const flags of [[], ['--keep-processes']])
    it(`reports it lost to its session, once, though nothing of it ran${flags.length ? ' (with --keep-processes)' : ''}`, async () => {
      const address = `unix:${join(tempDir('tv-restart-'), 'serve.sock')}`
      const config = { toolboxes: [join(fixtures, 'restarting')] }
      const first = await serve(flags, address, {}, { config })
      const agent = await turn(address, first.state, 'agent-1', first.tag)
      expect(await call(agent, 'crasher', {})).toMatch(/^\{"process":"p1"/)
      let status = ''
      for (let i = 0; i < 100 && !status.startsWith('restarting'); i++) {
        // Its first line: mail may be folded after it.
        const answer = await call(agent, 'processes', { command: 'status', process: 'p1' })
        status = JSON.parse(answer.split('\n')[0]!).status
        if (!status.startsWith('restarting')) await new Promise((resolve) => setTimeout(resolve, 20))
      }
      expect(status).toBe('restarting (1)')
      first.child.kill('SIGKILL')
      await first.exited
      const second = await serve(flags, address, {}, { config, state: first.state })
      expect(second.stderr()).toContain('reported lost: p1 crasher (session agent-1)')
      const back = await turn(address, second.state, 'agent-1', second.tag)
      const mail = await unread(back)
      expect(mail.filter((m) => m.id.startsWith('lost-')).map((m) => [m.from, m.body.status])).toEqual([
        ['task:p1', 'failed: lost on restart'],
      ])
      const listed = JSON.parse(await call(back, 'processes', { command: 'list' })).processes
      expect(listed.map((p: { process: string; status: string }) => `${p.process} ${p.status}`)).toEqual([
        'p1 failed: lost on restart',
      ])
      const later = await turn(address, second.state, 'agent-1', second.tag)
      expect(await unread(later)).toEqual([])
      second.child.kill('SIGTERM')
      expect(await second.exited).toBe(0)
    }, 60_000)
})

describe('toolvisor serve on SIGINT', () => {
  it('stops accepting, stops every process with its declared cancel, pushes their ends, closes its run and exits 0', async () => {
    const endpoint = await harness()
    const socket = join(tempDir('tv-graceful-'), 'serve.sock')
    const address = `unix:${socket}`
    const config = { toolboxes: [examples, join(fixtures, 'graceful')], bash: { profile: 'hyperhive' } }
    const server = await serve(['--notify', `unix:${endpoint.path}`], address, {}, { config })
    const files = [1, 2].map((n) => join(tempDir('tv-graceful-out-'), `stopper-${n}`))
    const agent = await turn(address, server.state, 'agent-1', server.tag)
    for (const file of files) expect(await call(agent, 'stopper', { file })).toContain('"status":"running"')
    const shell = startedId(await call(agent, 'run', { cmd: 'sleep 60', wait_seconds: 0 }))
    expect(JSON.parse(await call(agent, 'counter', { to: 100000, 'every-ms': 50 }))).toMatchObject({
      task: 't1',
    })
    await agent.close()
    expect(
      await eventually(() => ['p1', 'p2', shell, 't1'].every((key) => endpoint.of(key).length === 1)),
    ).toBe(true)
    server.child.kill('SIGINT')
    expect(await server.exited).toBe(0)
    expect(files.map((file) => readFileSync(file, 'utf8'))).toEqual([
      'declared cancel\n',
      'declared cancel\n',
    ])
    expect(await eventually(() => tagged(server.tag).length === 0, 3000)).toBe(true)
    expect(existsSync(socket)).toBe(false)
    // The ends were pushed before the exit.
    for (const key of ['p1', 'p2', shell, 't1']) expect(endpoint.of(key), key).toEqual(['running', 'done'])
    // The run closed: a start on the same state finds nothing lost.
    const next = await serve([], address, {}, { config, state: server.state })
    expect(next.stderr()).not.toContain('an earlier run ended')
    next.child.kill('SIGTERM')
    expect(await next.exited).toBe(0)
  }, 60_000)
})
