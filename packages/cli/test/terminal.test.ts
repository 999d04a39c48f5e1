// Interactive programs over MCP (issue 31's acceptance): `toolvisor mcp --bash` served to the SDK
// client, real programs on real pseudo-terminals driven by `write_stdin` and read as the screen;
// under bwrap and Landlock read-only, as root and as an ordinary user, confined as without a
// terminal; and the codex profile's exec_command and write_stdin.
import { randomUUID } from 'node:crypto'
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { sandboxUserDir } from '@toolvisor/process-runtime/testing'
import { afterEach, describe, expect, it } from 'vitest'
import { asUserSkip, seenAs, userCommand, userDir } from './as-user.js'
import { bin, eventually, tagged, tempDir } from './helpers.js'
import { hasBwrap, isRoot } from './sandbox-helpers.js'

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

type Runner = 'root' | 'user'

/** The SDK client on `toolvisor mcp ARGS`, run by `runner` in `cwd`; its processes checked gone after. */
async function served(runner: Runner, cwd: string, args: string[]) {
  const tag = randomUUID()
  const state = runner === 'root' ? tempDir() : join(cwd, '.state')
  const full = [bin, 'mcp', ...args, '--state-dir', state]
  const command =
    runner === 'root'
      ? { command: process.execPath, args: full, cwd, env: process.env as Record<string, string> }
      : userCommand(process.execPath, [seenAs(bin), ...full.slice(1)], { cwd })
  const transport = new StdioClientTransport({
    ...command,
    env: { ...command.env, TV_TEST_TAG: tag },
    stderr: 'pipe',
  })
  const client = new Client({ name: 'terminal-test', version: '1' })
  await client.connect(transport)
  cleanups.push(async () => {
    await client.close()
    expect(await eventually(() => tagged(tag).length === 0), 'processes left').toBe(true)
  })
  const call = async (name: string, args: Record<string, unknown>) => {
    const result = (await client.callTool({ name, arguments: args })) as {
      content: Array<{ text: string }>
      isError?: boolean
    }
    return { text: result.content.map((c) => c.text).join('\n'), isError: result.isError === true }
  }
  return { client, call }
}

function workDir(runner: Runner, prefix: string): string {
  const dir = runner === 'root' ? sandboxUserDir(import.meta.dirname, prefix) : userDir(`${prefix}-`)
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

const started = (text: string) => /started background task (\S+)/.exec(text)?.[1] ?? ''
const hasPython = existsSync('/usr/bin/python3')

/** The Python REPL of the acceptance, through `call`: 2+2, a function over two sends, C-d. */
async function pythonRepl(call: Awaited<ReturnType<typeof served>>['call']) {
  const run = await call('bash', {
    command: 'python3 -q',
    description: 'python',
    tty: true,
    run_in_background: true,
  })
  const id = started(run.text)
  const type = (args: Record<string, unknown>) => call('write_stdin', { task_id: id, ...args })
  await type({ until: '>>> ' })
  expect((await type({ text: '2+2', keys: ['Enter'], until: '>>> ' })).text).toMatch(/2\+2\n4\n>>> /)
  await type({ text: 'def square(x):', keys: ['Enter'], until: '... ' })
  await type({ text: '    return x * x', keys: ['Enter'], until: '... ' })
  await type({ keys: ['Enter'], until: '>>> ' })
  expect((await type({ text: 'square(12)', keys: ['Enter'], until: '>>> ' })).text).toContain('144')
  expect((await type({ keys: ['C-d'], wait_ms: 10_000 })).text).toMatch(
    /\[status: completed, exit code: 0\]$/,
  )
}

describe('toolvisor mcp --bash: programs on a terminal, through MCP', () => {
  it('lists write_stdin beside bash, and bash takes tty, columns and rows', async () => {
    const { client } = await served('root', tempDir(), ['--bash'])
    const { tools } = await client.listTools()
    const bash = tools.find((tool) => tool.name === 'bash')!
    expect(Object.keys(bash.inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining(['tty', 'columns', 'rows']),
    )
    expect(tools.map((tool) => tool.name)).toContain('write_stdin')
  })

  it.skipIf(!hasPython)('drives a Python REPL', async () => {
    const { call } = await served('root', tempDir(), ['--bash'])
    await pythonRepl(call)
  })

  it.skipIf(!existsSync('/usr/bin/vim') || !existsSync('/usr/bin/less'))(
    'pages less and edits with vim, reading the screen',
    async () => {
      const work = tempDir()
      writeFileSync(join(work, 'long.txt'), Array.from({ length: 100 }, (_, i) => `row ${i + 1}`).join('\n'))
      const { call } = await served('root', work, ['--bash'])
      const less = started(
        (
          await call('bash', {
            command: 'less long.txt',
            description: 'l',
            tty: true,
            run_in_background: true,
          })
        ).text,
      )
      await call('write_stdin', { task_id: less, until: 'row 23' })
      const paged = await call('write_stdin', {
        task_id: less,
        keys: ['PageDown'],
        until: 'row 46',
        screen: true,
      })
      expect(paged.text.split('\n')[1]).toBe('row 24')
      expect((await call('write_stdin', { task_id: less, text: 'q', wait_ms: 10_000 })).text).toMatch(
        /exit code: 0\]$/,
      )
      const vim = started(
        (
          await call('bash', {
            command: 'vim -u NONE -i NONE -n new.txt',
            description: 'v',
            tty: true,
            run_in_background: true,
          })
        ).text,
      )
      expect((await call('write_stdin', { task_id: vim, screen: true, wait_ms: 10_000 })).text).toContain(
        'new.txt',
      )
      await call('write_stdin', { task_id: vim, text: 'iwritten by vim', keys: ['Escape'] })
      const saved = await call('write_stdin', { task_id: vim, text: ':wq', keys: ['Enter'], wait_ms: 10_000 })
      expect(saved.text).toMatch(/exit code: 0\]$/)
      expect(readFileSync(join(work, 'new.txt'), 'utf8')).toBe('written by vim\n')
    },
  )

  it.skipIf(!hasPython)(
    'profile codex: exec_command on a tty, write_stdin answers, C-d ends it',
    async () => {
      const { client, call } = await served('root', tempDir(), ['--bash-profile', 'codex'])
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(
        expect.arrayContaining(['exec_command', 'write_stdin']),
      )
      const start = await call('exec_command', { cmd: 'python3 -q', tty: true, yield_time_ms: 1000 })
      const id = Number(/Process running with session ID (\d+)/.exec(start.text)?.[1])
      expect(id).toBeGreaterThanOrEqual(1000)
      const sum = await call('write_stdin', { session_id: id, chars: '6*7\n', yield_time_ms: 1000 })
      expect(sum.text).toMatch(/Output:\n6\*7\n42\n>>> $/)
      const end = await call('write_stdin', { session_id: id, chars: '\u0004', yield_time_ms: 5000 })
      expect(end.text).toContain('Process exited with code 0')
    },
  )
})

const runners: Array<{ readonly runner: Runner; readonly skip: boolean }> = [
  { runner: 'root', skip: !hasBwrap || !isRoot },
  { runner: 'user', skip: !hasBwrap || asUserSkip !== undefined },
]

for (const { runner, skip } of runners) {
  for (const mechanism of ['bwrap', 'landlock']) {
    describe(`as ${runner}, under ${mechanism} read-only: a terminal is confined as a pipe is`, () => {
      it.skipIf(skip || !hasPython)('a write is denied, C-c reaches the program, the REPL runs', async () => {
        const work = workDir(runner, 'tv-tty-work')
        const { call } = await served(runner, work, [
          '--bash',
          '--sandbox',
          mechanism,
          '--bash-sandbox',
          'read-only',
        ])
        const denied = await call('bash', { command: 'echo x > escaped', description: 'Write', tty: true })
        expect(denied.text).toContain('[sandbox: file access denied under read-only mode]')
        expect(existsSync(join(work, 'escaped'))).toBe(false)
        const script = 'trap "echo caught; exit 4" INT; echo ready; while :; do sleep 0.05; done'
        const id = started(
          (await call('bash', { command: script, description: 'w', tty: true, run_in_background: true }))
            .text,
        )
        await call('write_stdin', { task_id: id, until: 'ready' })
        const caught = await call('write_stdin', { task_id: id, keys: ['C-c'], wait_ms: 10_000 })
        expect(caught.text).toMatch(/caught\n\n\[status: completed, exit code: 4\]$/)
        await pythonRepl(call)
      })
    })
  }
}

/** A tool that declares a terminal (describe v2 `process.terminal`): it asks a name, on its tty. */
const ASKER = `#!/bin/sh
if [ "$1" = describe ]; then
  echo '{"protocol":2,"slug":"asker","description":"Asks a name on a terminal","args":[],"process":{"mode":"service","terminal":{"columns":60,"rows":12}}}'
  exit 0
fi
test -t 0 && echo "on a tty: $(stty size) $TERM"
trap 'echo hung up >> "$HOME_MARK"; exit 0' HUP
printf 'name? '; read -r name; echo "hello $name"
while :; do sleep 0.05; done
`

describe('a tool that declares process.terminal, through MCP', () => {
  it('starts on a terminal; processes keys types into it and screen reads it; stop hangs it up', async () => {
    const box = tempDir()
    const mark = join(tempDir(), 'hup')
    writeFileSync(join(box, 'asker'), ASKER.replace('"$HOME_MARK"', mark), { mode: 0o755 })
    const { client, call } = await served('root', box, ['--toolbox', box])
    const tools = (await client.listTools()).tools.map((tool) => tool.name)
    expect(tools).toContain('asker')
    const started = await call('asker', {})
    const handle = /"(p\d+)"/.exec(started.text)?.[1]
    expect(handle, started.text).toBe('p1')
    const typed = await call('processes', {
      command: 'keys',
      process: 'p1',
      text: 'ada',
      keys: ['Enter'],
      until: 'hello ada',
    })
    const body = JSON.parse(typed.text.split('\n')[0]!) as {
      settled: string
      screen: { size: string; rows: string[] }
    }
    expect(body.settled).toBe('pattern')
    expect(body.screen.size).toBe('60x12')
    expect(body.screen.rows).toEqual(['on a tty: 12 60 xterm-256color', 'name? ada', 'hello ada'])
    const screen = JSON.parse(
      (await call('processes', { command: 'screen', process: 'p1' })).text.split('\n')[0]!,
    )
    expect(screen.screen.rows.at(-1)).toBe('hello ada')
    const stopped = JSON.parse(
      (await call('processes', { command: 'stop', process: 'p1' })).text.split('\n')[0]!,
    )
    expect(stopped).toMatchObject({ process: 'p1', status: 'exited', exitCode: 0 })
    expect(readFileSync(mark, 'utf8')).toBe('hung up\n')
    const refused = await call('processes', { command: 'keys', process: 'p1', keys: ['Enter'] })
    expect(refused.isError).toBe(true)
  })
})
