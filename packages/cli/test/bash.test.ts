// The bash tools over MCP (issue 13): `toolvisor mcp --bash` served to the SDK client, a crash of
// the server leaving nothing behind, and two sessions of one toolvisor refused each other's tasks.
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { createMcpServer } from '@toolvisor/mcp-server'
import { eventually } from '@toolvisor/process-runtime/testing'
import { afterEach, describe, expect, it } from 'vitest'
import { ConfigFile, readConfig } from '../src/config.js'
import { compose } from '../src/internal/compose.js'
import { bin, run, startedId, tagged, tempDir } from './helpers.js'
import { bridgeFlags } from './serve-helpers.js'

const opened: Array<{ close(): Promise<void>; tag?: string }> = []
afterEach(async () => {
  for (const client of opened.splice(0).reverse()) {
    await client.close()
    if (client.tag)
      expect(await eventually(() => tagged(client.tag!).length === 0), 'processes left').toBe(true)
  }
})

/** The SDK client on `toolvisor mcp ARGS`, its processes tagged; closed (and checked) after the test. */
async function served(args: string[], stateDir = tempDir('tv-bash-mcp-')) {
  const tag = randomUUID()
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin, 'mcp', ...args, '--state-dir', stateDir],
    env: { ...(process.env as Record<string, string>), TV_TEST_TAG: tag },
    stderr: 'pipe',
  })
  const client = new Client({ name: 'bash-test', version: '0.0.0' })
  await client.connect(transport)
  opened.push({ close: () => client.close(), tag })
  const call = async (name: string, args: Record<string, unknown>) => {
    const result = (await client.callTool({ name, arguments: args })) as { content: Array<{ text: string }> }
    return result.content.map((c) => c.text).join('\n')
  }
  return { client, call, tag, pid: transport.pid! }
}

const bg = (command: string) => ({ command, description: 'in the background', run_in_background: true })

describe('toolvisor mcp --bash', () => {
  it('serves bash, bash_output and bash_kill with seed 001 texts', async () => {
    const { client, call } = await served(['--bash'])
    const names = (await client.listTools()).tools.map((tool) => tool.name)
    expect(names).toEqual(expect.arrayContaining(['bash', 'bash_output', 'bash_kill', 'processes']))
    expect(await call('bash', { command: 'echo hi; exit 3', description: 'say hi' })).toBe(
      'hi\n[exit code: 3]',
    )
    expect(await call('bash', bg('sleep 30'))).toBe('started background task bash-1')
    expect(await call('bash_output', { task_id: 'bash-1' })).toBe('(no new output)\n[status: running]')
    // The kill's answer shows the end: the completion notice is not mailed on top (decision 0104).
    expect(await call('bash_kill', { task_id: 'bash-1' })).toBe('killed background task bash-1')
    expect(await call('bash_output', { task_id: 'bash-1' })).toBe(
      '(no new output)\n[status: killed by SIGTERM]',
    )
  })

  it('speaks the profile --bash-profile names, and refuses an unknown one', async () => {
    const { client } = await served(['--bash-profile', 'hyperhive'])
    expect((await client.listTools()).tools.map((tool) => tool.name).sort()).toEqual([
      'kill',
      'processes',
      'run',
      'send',
      'status',
    ])
    const config = join(tempDir(), 'toolvisor.json')
    writeFileSync(config, JSON.stringify({ bash: { profile: 'toolnexus' } }))
    const fromFile = await served(['--config', config])
    expect((await fromFile.client.listTools()).tools.map((tool) => tool.name).sort()).toEqual([
      'bash',
      'bash_output',
      'kill_shell',
      'processes',
      'write_stdin',
    ])
    const wrong = await run(['mcp', '--bash-profile', 'nope'])
    expect([wrong.code, wrong.stderr]).toEqual([
      2,
      'toolvisor mcp: --bash-profile nope: expected one of dsh, hyperhive, toolnexus, codex\n',
    ])
  })

  it("serves seed 001's tool:bash section as the initialize instructions and as a prompt; the other profiles have none", async () => {
    const text =
      'Check the [exit code: N] marker on every bash result; investigate failures before moving on.'
    const { client } = await served(['--bash'])
    expect(client.getInstructions()).toBe(text)
    expect(client.getServerCapabilities()?.prompts).toEqual({})
    expect((await client.listPrompts()).prompts).toEqual([
      { name: 'tool:bash', description: expect.stringContaining('bash results') },
    ])
    const prompt = await client.getPrompt({ name: 'tool:bash' })
    expect(prompt.messages).toEqual([{ role: 'user', content: { type: 'text', text } }])
    await expect(client.getPrompt({ name: 'tool:nope' })).rejects.toThrow(
      'no prompt named "tool:nope"; the prompts are: "tool:bash"',
    )
    const other = await served(['--bash-profile', 'hyperhive'])
    expect(other.client.getInstructions()).toBeUndefined()
    expect(other.client.getServerCapabilities()?.prompts).toBeUndefined()
  })

  it('cuts a long foreground output at a line: the tail the model reads starts with a whole line', async () => {
    const config = join(tempDir(), 'toolvisor.json')
    writeFileSync(config, JSON.stringify({ bash: { outputBytes: 30_000 } }))
    const { call } = await served(['--config', config])
    const text = await call('bash', { command: 'seq 1 200000', description: 'count' })
    const kept = text.slice(0, text.indexOf('\n[output truncated; full output: '))
    const first = kept.slice(0, kept.indexOf('\n'))
    // seq's lines are numbers: a whole one is the line after the one before it.
    const last = kept.trimEnd().split('\n').at(-1)
    expect(last).toBe('200000')
    expect(Number(first)).toBe(200000 - kept.trimEnd().split('\n').length + 1)
    expect(kept.length).toBeLessThanOrEqual(30_000)
  })

  it('leaves nothing running when the server is killed with SIGKILL mid-call, and reports the task interrupted', async () => {
    const stateDir = tempDir('tv-bash-crash-')
    const first = await served(['--bash-profile', 'hyperhive', '--session', 'agent'], stateDir)
    const t1 = startedId(
      await first.call('run', { cmd: 'sleep 300 & setsid sleep 301 & wait', wait_seconds: 0 }),
    )
    const foreground = first.client.callTool({
      name: 'run',
      arguments: { cmd: 'sleep 302', wait_seconds: 30 },
    })
    foreground.catch(() => {})
    expect(await eventually(() => tagged(first.tag).length >= 5)).toBe(true)
    process.kill(first.pid, 'SIGKILL')
    expect(await eventually(() => tagged(first.tag).length === 0, 5000), 'survivors of the crash').toBe(true)
    const back = await served(['--bash-profile', 'hyperhive', '--session', 'agent'], stateDir)
    // The loss is mail (decision 0052) in the profile's words: its body is the status JSON the
    // status call shows (seed 002). A first answer that does not show the end carries it.
    const [own, mail] = (await back.call('run', { cmd: 'true', name: 'after' })).split('\n[mail ')
    expect(JSON.parse(own!)).toMatchObject({ id: 'after', status: 'done' })
    const [head, body] = mail!.split('] completion: ')
    expect(head).toMatch(new RegExp(`^lost-${t1}-\\S+ from task:${t1}$`))
    const report = await back.call('status', { id: t1 })
    expect(JSON.parse(report)).toMatchObject({ id: t1, status: 'interrupted' })
    expect(JSON.parse(body!)).toEqual(JSON.parse(report))
  })

  it("queues a run past the session's cap as pending (seed 002): started when one ends, cancelled by kill; dsh refuses (decision 0105)", async () => {
    const config = join(tempDir(), 'toolvisor.json')
    const go = join(tempDir(), 'go')
    writeFileSync(config, JSON.stringify({ bash: { profile: 'hyperhive', maxTasksPerSession: 1 } }))
    const { call } = await served(['--config', config, '--session', 'agent'])
    const wait = `for i in $(seq 1 600); do [ -e ${go} ] && break; sleep 0.05; done; echo first`
    expect(await call('run', { cmd: wait, name: 'first', wait_seconds: 0 })).toBe('task started: id=first')
    expect(await call('run', { cmd: 'echo second', name: 'second', wait_seconds: 0 })).toBe(
      'task started: id=second',
    )
    expect(await call('run', { cmd: 'echo third', name: 'third', wait_seconds: 0 })).toBe(
      'task started: id=third',
    )
    const statusOf = async (id: string) => JSON.parse((await call('status', { id })).split('\n[mail ')[0]!)
    expect(await statusOf('second')).toMatchObject({ id: 'second', status: 'pending', exit_code: null })
    // A pending task is cancelled before it starts, and ends as killed.
    expect(await call('kill', { id: 'third' })).toBe('cancelled task third before it started')
    expect(await statusOf('third')).toMatchObject({ status: 'killed', exit_code: null })
    // The first ends: the second starts, and runs to its end; a status wait waits through both.
    writeFileSync(go, '')
    const done = await call('status', { id: 'second', wait_seconds: 10 })
    expect(JSON.parse(done.split('\n[mail ')[0]!)).toMatchObject({
      status: 'done',
      exit_code: 0,
      stdout_tail: 'second\n',
    })

    const dshConfig = join(tempDir(), 'toolvisor.json')
    writeFileSync(dshConfig, JSON.stringify({ bash: { maxTasksPerSession: 1 } }))
    const dsh = await served(['--config', dshConfig])
    expect(await dsh.call('bash', bg('sleep 30'))).toBe('started background task bash-1')
    expect(await dsh.call('bash', bg('sleep 31'))).toBe(
      'Error: this session already runs 1 background tasks, as many as it may (bash.maxTasksPerSession): wait for one to end or stop one; nothing was started',
    )
  })

  it('shows a completion once: a status or a listing that shows the end withdraws its mail (seed 002, decision 0104)', async () => {
    const { call } = await served(['--bash-profile', 'hyperhive', '--session', 'agent'])
    /** Calls until `done` holds for an answer (every 50 ms, at most 10 s); that answer. */
    const until = async (make: () => Promise<string>, done: (text: string) => boolean) => {
      for (const end = Date.now() + 10_000; Date.now() < end; ) {
        const text = await make()
        if (done(text)) return text
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      throw new Error('not in 10 s')
    }
    // 1. A status that shows the end (it ended before the call: its mail was posted): no mail of it.
    expect(await call('run', { cmd: 'echo x', name: 'obs', wait_seconds: 0 })).toBe('task started: id=obs')
    const status = await until(
      () => call('status', { id: 'obs' }),
      (text) => text.includes('"status":"done"'),
    )
    expect(status).not.toContain('[mail')
    // 2. A listing that shows the end: no mail of it either.
    expect(await call('run', { cmd: 'echo y', name: 'listed', wait_seconds: 0 })).toBe(
      'task started: id=listed',
    )
    const listing = await until(
      () => call('processes', { command: 'list' }),
      (text) => /"process":"listed"[^}]*"status":"exited \(0\)"/.test(text),
    )
    expect(listing).not.toContain('[mail')
    // Neither comes later.
    expect(await call('run', { cmd: 'true', name: 'probe' })).not.toContain('[mail')
    // 3. An end nothing showed: its mail reaches the model, once.
    expect(await call('run', { cmd: 'sleep 0.2', name: 'later', wait_seconds: 0 })).toBe(
      'task started: id=later',
    )
    const waited = await call('processes', { command: 'wait', timeout_seconds: 10 })
    expect(JSON.parse(waited).mail.map((m: { id: string }) => m.id)).toEqual([
      expect.stringMatching(/^done-later-/),
    ])
    expect(await call('run', { cmd: 'true', name: 'probe2' })).not.toContain('[mail')
  })

  it("reports a dsh task a crash lost in seed 001's words: bash-1, its notice, its status line", async () => {
    const stateDir = tempDir('tv-bash-crash-dsh-')
    const first = await served(['--bash', '--session', 'agent'], stateDir)
    expect(await first.call('bash', bg('sleep 300'))).toBe('started background task bash-1')
    expect(await eventually(() => tagged(first.tag).length >= 2)).toBe(true)
    process.kill(first.pid, 'SIGKILL')
    expect(await eventually(() => tagged(first.tag).length === 0, 5000), 'survivors of the crash').toBe(true)
    const back = await served(['--bash', '--session', 'agent'], stateDir)
    const answer = await back.call('bash', { command: 'echo after', description: 'a first call' })
    const [own, mail] = answer.split('\n[mail ')
    expect(own).toBe('after\n')
    const status = (await back.call('bash_output', { task_id: 'bash-1' })).split('\n').at(-1)!
    expect(status).toMatch(/^\[status: .+\]$/)
    expect(mail).toMatch(/^lost-bash-1-\S+ from task:bash-1\] completion: /)
    expect(mail!.split('] completion: ')[1]).toBe(
      JSON.stringify(`background bash task bash-1 finished ${status}. Read its output with bash_output.`),
    )
    // A new task after the restart does not take the lost one's id.
    expect(await back.call('bash', bg('true'))).toBe('started background task bash-2')
  })
})

describe('the bash section of toolvisor.json', () => {
  it('makes its paths absolute, can be switched off, and names a bad field', () => {
    const dir = tempDir()
    const file = join(dir, 'toolvisor.json')
    writeFileSync(file, JSON.stringify({ bash: { workdir: 'work', enabled: false, killGraceMs: 100 } }))
    expect(readConfig(file).bash).toMatchObject({
      workdir: join(dir, 'work'),
      enabled: false,
      killGraceMs: 100,
    })
    writeFileSync(file, JSON.stringify({ bash: { profile: 'zsh' } }))
    expect(() => readConfig(file)).toThrow(
      `${file}: $.bash.profile: Invalid option: expected one of "dsh"|"hyperhive"|"toolnexus"`,
    )
  })

  it('composes no bash tools when the section says enabled: false', async () => {
    const composed = await compose(
      ConfigFile.parse({ bash: { enabled: false }, stateDir: tempDir('tv-bash-off-') }),
    )
    opened.push({ close: () => composed.kernel.dispose() })
    expect(composed.tools.get('bash')).toBeUndefined()
  })
})

describe('two MCP sessions of one toolvisor', () => {
  it("refuse each other's background tasks with seed 001's text, both ways", async () => {
    // What `toolvisor.json` with `"bash": {}` composes.
    const composed = await compose(ConfigFile.parse({ bash: {}, stateDir: tempDir('tv-bash-two-') }))
    opened.push({ close: () => composed.kernel.dispose() })
    const connect = async (sessionId: string) => {
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
      const surface = createMcpServer(composed.tools, {
        name: 'toolvisor',
        version: '0',
        sessions: composed.sessions,
        sessionId,
        log: () => {},
      })
      await surface.connect(serverSide)
      const client = new Client({ name: sessionId, version: '0' })
      await client.connect(clientSide)
      opened.push({ close: () => client.close() })
      return async (name: string, args: Record<string, unknown>) => {
        const result = (await client.callTool({ name, arguments: args })) as {
          content: Array<{ text: string }>
          isError?: boolean
        }
        return { text: result.content.map((c) => c.text).join('\n'), isError: result.isError === true }
      }
    }
    const alice = await connect('alice')
    const bob = await connect('bob')
    expect((await alice('bash', bg('sleep 30'))).text).toBe('started background task bash-1')
    expect((await bob('bash', bg('sleep 30'))).text).toBe('started background task bash-2')
    for (const tool of ['bash_output', 'bash_kill']) {
      expect(await bob(tool, { task_id: 'bash-1' })).toEqual({
        text: 'Error: task bash-1 belongs to another session',
        isError: true,
      })
      expect(await alice(tool, { task_id: 'bash-2' })).toEqual({
        text: 'Error: task bash-2 belongs to another session',
        isError: true,
      })
    }
    expect((await alice('bash_kill', { task_id: 'bash-1' })).text).toBe('killed background task bash-1')
    expect((await bob('bash_output', { task_id: 'bash-2' })).text).toBe('(no new output)\n[status: running]')
  })
})

describe('two MCP sessions through toolvisor serve', () => {
  it("refuse each other's background tasks: two toolvisor mcp --connect clients of one daemon", async () => {
    const state = tempDir('tv-bash-serve-')
    const config = join(state, 'toolvisor.json')
    writeFileSync(config, JSON.stringify({ bash: {} }))
    const tag = randomUUID()
    const args = [bin, 'serve', '--listen', '127.0.0.1:0', '--config', config, '--state-dir', state]
    const daemon = spawn(process.execPath, args, {
      env: { ...process.env, TV_TEST_TAG: tag },
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    const stopped = new Promise((resolve) => daemon.once('exit', resolve))
    const stop = async () => {
      daemon.kill('SIGTERM')
      await stopped
    }
    opened.push({ close: stop, tag })
    let log = ''
    daemon.stderr!.on('data', (chunk: Buffer) => (log += chunk.toString('utf8')))
    const at = / at (http:\/\/\S+\/mcp) /
    expect(await eventually(() => at.test(log), 20_000), log).toBe(true)
    const bridge = (session: string) => served(bridgeFlags(at.exec(log)![1]!, state, session))
    const alice = await bridge('alice')
    const bob = await bridge('bob')
    expect(await alice.call('bash', bg('sleep 30'))).toBe('started background task bash-1')
    expect(await bob.call('bash', bg('sleep 30'))).toBe('started background task bash-2')
    for (const tool of ['bash_output', 'bash_kill']) {
      expect(await bob.call(tool, { task_id: 'bash-1' })).toBe(
        'Error: task bash-1 belongs to another session',
      )
      expect(await alice.call(tool, { task_id: 'bash-2' })).toBe(
        'Error: task bash-2 belongs to another session',
      )
    }
    expect(await bob.call('bash_output', { task_id: 'bash-2' })).toBe('(no new output)\n[status: running]')
  })

  it('give each session the workspace its bridge names, within the roots the operator allows, and refuse any other', async () => {
    const state = tempDir('tv-bash-ws-')
    const root = tempDir('tv-bash-ws-root-')
    const [a, b] = ['a', 'b'].map((name) => join(root, name))
    for (const dir of [a!, b!]) mkdirSync(dir)
    const outside = tempDir('tv-bash-ws-outside-')
    symlinkSync(outside, join(root, 'link-out'))
    const config = join(state, 'toolvisor.json')
    writeFileSync(config, JSON.stringify({ bash: {}, serve: { workspaces: [root] } }))
    const tag = randomUUID()
    const args = [bin, 'serve', '--listen', '127.0.0.1:0', '--config', config, '--state-dir', state]
    const daemon = spawn(process.execPath, args, {
      env: { ...process.env, TV_TEST_TAG: tag },
      stdio: ['ignore', 'ignore', 'pipe'],
      cwd: outside,
    })
    const stopped = new Promise((resolve) => daemon.once('exit', resolve))
    opened.push({
      close: async () => {
        daemon.kill('SIGTERM')
        await stopped
      },
      tag,
    })
    let log = ''
    daemon.stderr!.on('data', (chunk: Buffer) => (log += chunk.toString('utf8')))
    const at = / at (http:\/\/\S+\/mcp) /
    expect(await eventually(() => at.test(log), 20_000), log).toBe(true)
    const url = at.exec(log)![1]!
    const flags = (session: string, workspace?: string) => [
      ...bridgeFlags(url, state, session),
      ...(workspace ? ['--workspace', workspace] : []),
    ]
    const pwd = { command: 'pwd', description: 'where am I' }
    const alice = await served(flags('alice', a))
    const bob = await served(flags('bob', b))
    const carol = await served(flags('carol'))
    expect(await alice.call('bash', pwd)).toBe(`${realpathSync(a!)}\n`)
    expect(await bob.call('bash', pwd)).toBe(`${realpathSync(b!)}\n`)
    // Naming none: the daemon's own directory.
    expect(await carol.call('bash', pwd)).toBe(`${realpathSync(outside)}\n`)
    // Outside the roots, directly or through a symlink inside them: refused before any session.
    for (const workspace of [outside, join(root, 'link-out'), 'relative/dir', join(root, 'missing')]) {
      const refused = await run(['mcp', ...flags('dave', workspace)])
      expect(refused.code, workspace).toBe(2)
      expect(refused.stderr).toContain('refused the workspace: x-toolvisor-workspace')
    }
    const token = readFileSync(join(state, 'serve.token'), 'utf8').trim()
    const direct = await fetch(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'x-toolvisor-workspace': outside,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }),
    })
    expect(direct.status).toBe(403)
    expect(((await direct.json()) as { error: { message: string } }).error.message).toContain(
      'not inside a workspace the operator allows',
    )
  })
})
