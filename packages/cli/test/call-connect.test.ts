// `toolvisor call --connect` (issue 35 point 3, decision 0114): a service tried from the command
// line. Each call is a client of a running serve, in a named session: the service it starts stays
// there, the next call reads it, sends to it and stops it; another session sees none of it.
import { writeFileSync } from 'node:fs'
import { type AddressInfo, createServer } from 'node:net'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { run, tempDir } from './helpers.js'
import { serve } from './serve-helpers.js'

describe('toolvisor call --connect', () => {
  it('starts a service in the daemon, then reads it, sends to it and stops it, call by call, in one session', async () => {
    const server = await serve()
    const log = join(tempDir('tv-call-connect-'), 'app.log')
    writeFileSync(log, '')
    const as = (session: string) => [
      '--connect',
      server.url,
      '--token-file',
      join(server.state, 'serve.token'),
      '--session',
      session,
    ]
    const call = (tool: string, args: unknown, session = 'me') =>
      run(['call', tool, JSON.stringify(args), ...as(session)])

    const started = await call('log_watcher', { file: log })
    expect(started.code).toBe(0)
    expect(JSON.parse(started.stdout)).toMatchObject({
      process: 'p1',
      tool: 'log_watcher',
      status: 'running',
    })
    writeFileSync(log, 'ERROR one\n', { flag: 'a' })
    // Read until the line is there (the service reads the file as it grows).
    let read = ''
    for (let i = 0; i < 50 && !read.includes('"line":"ERROR one"'); i++) {
      read = (await call('processes', { command: 'read', process: 'p1' })).stdout
      if (!read.includes('"line":"ERROR one"')) await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(read).toContain('"line":"ERROR one"')
    const sent = await call('log_watcher__send', { process: 'p1', event: { op: 'pattern', value: 'WARN' } })
    expect(JSON.parse(sent.stdout.split('\n')[0]!)).toEqual({
      accepted: true,
      events: [{ notice: 'pattern is now /WARN/' }],
    })
    // Another session: nothing of it.
    expect(JSON.parse((await call('processes', { command: 'list' }, 'other')).stdout)).toEqual({
      processes: [],
    })
    const stopped = await call('processes', { command: 'stop', process: 'p1' })
    expect(JSON.parse(stopped.stdout.split('\n')[0]!)).toMatchObject({
      process: 'p1',
      status: 'exited',
      reason: 'cancelled',
    })
    // A tool the daemon does not serve: the model's answer, exit 1.
    const unknown = await call('nope', {})
    expect(unknown.code).toBe(1)
    expect(unknown.stdout).toMatch(/^unknown tool "nope"; the tools are: /)
    server.child.kill('SIGTERM')
    expect(await server.exited).toBe(0)
  }, 60_000)

  it('says why it cannot, exit 2: no daemon there, a file for TOOL, --command', async () => {
    const token = join(tempDir('tv-call-token-'), 'token')
    writeFileSync(token, 'x'.repeat(32), { mode: 0o600 })
    // A port nothing listens on (taken, then let go).
    const listener = createServer()
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve))
    const { port } = listener.address() as AddressInfo
    await new Promise((resolve) => listener.close(resolve))
    const gone = await run([
      'call',
      'processes',
      '{}',
      '--connect',
      `127.0.0.1:${port}`,
      '--token-file',
      token,
    ])
    expect(gone.code).toBe(2)
    expect(gone.stderr).toBe(
      `toolvisor call: cannot reach toolvisor serve at http://127.0.0.1:${port}/mcp: ECONNREFUSED; is it running?\n`,
    )
    const connected = ['--connect', '127.0.0.1:1', '--token-file', token]
    const file = await run(['call', './tool', '{}', ...connected])
    expect(file.code).toBe(2)
    expect(file.stderr).toContain(
      'with --connect, TOOL is a name the daemon serves (log_watcher, processes), not a file: ./tool',
    )
    const command = await run(['call', 'git_lite', '{}', '--command', 'log', ...connected])
    expect(command.code).toBe(2)
    expect(command.stderr).toContain(
      '--command has no meaning with --connect: name the tool as the model does (git_lite__log)',
    )
  })
})
