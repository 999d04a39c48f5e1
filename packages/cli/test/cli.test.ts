import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { shown } from '../src/commands/demo.js'
import {
  bin,
  eventually,
  examples,
  fixtures,
  run,
  tagged,
  taggedCommands,
  tempDir,
  toolvisor,
} from './helpers.js'

describe('toolvisor describe', () => {
  it('prints what the model will see', async () => {
    const { code, stdout, stderr } = await run(['describe', join(examples, 'echo-args')])
    expect(stderr).toBe('')
    expect(code).toBe(0)
    expect(stdout).toContain(`${join(examples, 'echo-args')} (v1 oneshot, stdout as is)`)
    expect(stdout).toContain('\necho_args\n')
    expect(stdout).toContain('  limit  integer, dashdashequal: a number; passed as --limit=VALUE')
    expect(stdout).toContain('  api-token  string, optional, env: ')
  })

  it('prints one JSON document with --json, with provider-safe names', async () => {
    const { code, stdout } = await run(['describe', join(examples, 'git-lite'), '--json'])
    expect(code).toBe(0)
    const doc = JSON.parse(stdout)
    expect(doc).toMatchObject({ protocol: 2, mode: 'oneshot', help: true })
    expect(doc.tools.map((t: { safeName: string }) => t.safeName)).toEqual([
      'git_lite__status',
      'git_lite__log',
    ])
    expect(doc.tools[1].inputSchema).toMatchObject({
      type: 'object',
      required: ['dir'],
      additionalProperties: false,
    })
  })

  it("lists a service's send companion and its on_exit and digest, as it is served", async () => {
    const tool = join(examples, 'log-watcher')
    const doc = JSON.parse((await run(['describe', tool, '--json'])).stdout)
    expect(doc.tools.map((t: { safeName: string }) => t.safeName)).toEqual([
      'log_watcher',
      'log_watcher__send',
    ])
    expect(doc.tools[1].inputSchema).toMatchObject({ required: ['process', 'event'] })
    expect(doc.runtime).toMatchObject({ onExit: 'report', digest: { per: 'seconds', n: 2 } })
    const text = (await run(['describe', tool])).stdout
    expect(text).toContain('\nlog_watcher__send\n')
    expect(text).toContain('  process  string: the handle of a running log_watcher process')
    // The event it sends, whole: its fields, an enum's values.
    expect(text).toContain(
      '  event  object\n    op  "pattern" | "pause" | "resume" | "stop"\n    value  string, optional: pattern: the new regular expression\n',
    )
    expect(text).toContain('\nservice: on_exit report, digest seconds 2\n')
  })

  it('prints the LoadingError and exits 2', async () => {
    const { code, stdout, stderr } = await run(['describe', join(fixtures, 'nope')])
    expect(code).toBe(2)
    expect(stdout).toBe('')
    expect(stderr).toBe(`toolvisor describe: ${join(fixtures, 'nope')}: no such file\n`)
  })
})

describe('toolvisor describe DIR', () => {
  it('says it takes one tool and points to check --toolbox', async () => {
    const { code, stdout, stderr } = await run(['describe', examples])
    expect([code, stdout]).toEqual([2, ''])
    expect(stderr).toBe(
      `toolvisor describe: ${examples} is a directory; describe takes one tool. ` +
        `To load every tool of a toolbox, run: toolvisor check --toolbox ${examples}\n`,
    )
  })
})

describe('toolvisor call', () => {
  it('passes one argument of each mode exactly, and exits 0', async () => {
    const args = { path: 'a b', pattern: 'p q', limit: 2, note: 'line\twith tab', 'api-token': 't' }
    const { code, stdout } = await run(['call', join(examples, 'echo-args'), JSON.stringify(args)])
    expect(code).toBe(0)
    expect(JSON.parse(stdout)).toEqual({
      argv: ['a b', '--pattern', 'p q', '--limit=2'],
      stdin: 'line\twith tab\n',
      env: { API_TOKEN: 't' },
    })
  })

  it('exits 1 with the error result when the tool fails', async () => {
    const { code, stdout } = await run(['call', join(fixtures, 'fails')])
    expect(code).toBe(1)
    expect(stdout).toBe(
      'fails failed: exit code 3\n--- stdout ---\npartial result\n--- stderr ---\nthe real reason\n',
    )
  })

  it('exits 2 on usage and loading errors, saying what to do', async () => {
    const notJson = await run(['call', join(examples, 'echo-args'), '{nope'])
    expect(notJson.code).toBe(2)
    expect(notJson.stderr).toMatch(
      /^toolvisor call: ARGS_JSON is not JSON: .*; pass an object such as '\{"path":"x"\}'\n$/,
    )
    const noCommand = await run(['call', join(examples, 'git-lite'), '{}'])
    expect(noCommand.code).toBe(2)
    expect(noCommand.stderr).toBe(
      'toolvisor call: git_lite has commands (status, log): pass --command NAME\n',
    )
    const flag = await run(['call', '--bogus'])
    expect(flag.code).toBe(2)
    expect(flag.stderr).toMatch(/^toolvisor call: Unknown option '--bogus'/)
    const sandbox = await run(['call', join(examples, 'echo-args'), '{}', '--sandbox', 'firejail'])
    expect(sandbox.code).toBe(2)
    expect(sandbox.stderr).toBe(
      'toolvisor call: --sandbox firejail: no such mechanism here; the mechanisms are bwrap, landlock, auto\n',
    )
    const runAs = await run(['call', join(examples, 'echo-args'), '{}', '--run-as', 'sudo'])
    expect(runAs.code).toBe(2)
    expect(runAs.stderr).toBe(
      'toolvisor call: --run-as sudo: no such mechanism here; the mechanisms are setpriv, runuser\n',
    )
  })

  it('--yield-ms does not point at a task it stops on exit: it stops it and prints what it produced (10.12)', async () => {
    const { stdout, stderr, code } = await run([
      'call',
      join(examples, 'counter'),
      '{"to": 100000, "every-ms": 20}',
      '--yield-ms',
      '300',
    ])
    expect(code).toBe(0)
    expect(stdout).not.toContain('processes')
    const events = JSON.parse(stdout) as Array<{ n: number }>
    expect(events.length).toBeGreaterThan(0)
    expect(events.map((e) => e.n)).toEqual(events.map((_, i) => i + 1))
    expect(stderr).toMatch(
      new RegExp(
        `^toolvisor call: counter was still running after --yield-ms; a task cannot outlive this command, so it was stopped \\((SIGTERM|exit code \\d+)\\) after ${events.length} events\\. To follow a stream, serve it with toolvisor mcp, or leave out --yield-ms\\.\\n$`,
      ),
    )
  })

  it('runs a sub-command with --command and prints progress to stderr with --progress', async () => {
    const counter = await run(['call', join(examples, 'counter'), '{"to":3,"every-ms":10}', '--progress'])
    expect(counter.code).toBe(0)
    expect(
      counter.stderr
        .split('\n')
        .filter(Boolean)
        .map((l) => l.replace(/"at":"[^"]+"/, '"at":_')),
    ).toEqual(['[1] {"n":1,"at":_}', '[2] {"n":2,"at":_}', '[3] {"n":3,"at":_}'])
    expect(JSON.parse(counter.stdout).map((e: { n: number }) => e.n)).toEqual([1, 2, 3])
    const log = await run([
      'call',
      join(examples, 'git-lite'),
      JSON.stringify({ dir: join(examples, '..', '..'), n: 2 }),
      '--command',
      'log',
    ])
    expect(log.code).toBe(0)
    expect(log.stdout.trim().split('\n')).toHaveLength(2)
  })

  it('cancels on Ctrl-C: the tool and everything it started are gone, exit 130', async () => {
    const { child, done, tag } = toolvisor(['call', join(fixtures, 'spawner')])
    const deadline = Date.now() + 10_000
    const sleeps = () => taggedCommands(tag).filter((command) => command === 'sleep 300').length
    // The spawner's child and grandchild are both up.
    while (sleeps() < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25))
    expect(sleeps()).toBe(2)
    child.kill('SIGINT')
    const { code, stdout } = await done
    expect(code).toBe(130)
    expect(stdout).toMatch(/^spawner failed: cancelled \(/)
    // The tool's group is gone when toolvisor exits; its watchdog follows within moments.
    const gone = Date.now() + 1000
    while (tagged(tag).length > 0 && Date.now() < gone) await new Promise((r) => setTimeout(r, 20))
    expect(tagged(tag)).toEqual([])
  })
})

describe('toolvisor', () => {
  it('has help for every command and exits 2 on an unknown one', async () => {
    for (const command of ['describe', 'call', 'mcp', 'demo']) {
      const { code, stdout } = await run([command, '--help'])
      expect(code).toBe(0)
      expect(stdout).toMatch(new RegExp(`^usage: toolvisor ${command}`))
    }
    const unknown = await run(['frobnicate'])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toMatch(/^toolvisor: unknown command "frobnicate"\n\nusage: toolvisor COMMAND/)
  })

  it('runs the demo', async () => {
    const { code, stdout } = await run(['demo', '--toolbox', examples])
    expect(code).toBe(0)
    expect(stdout).toContain('{"error":"task t1 belongs to another session"}')
    expect(stdout).toContain('"invalid":true')
    expect(stdout).toContain('result: {"accepted":true,"events":[{"notice":"pattern is now /WARN/"}]}')
    expect(stdout).toContain('"line":"ERROR disk full"')
    expect(stdout).toContain('"process":"p2","tool":"log_watcher","kind":"service","status":"exited (0)"')
    // Its last line is a command this user can run: toolvisor when it is on PATH, else this build.
    expect(stdout).toMatch(
      // A path with a space is quoted, so the line pastes whole.
      new RegExp(
        `\\nNext: (toolvisor|node \\S+/dist/bin\\.js|node '[^']+/dist/bin\\.js') mcp --toolbox ${examples.includes(' ') ? `'${examples}'` : examples}  \\(serve them to`,
      ),
    )
  }, 60_000)

  it('Ctrl-C in the demo stops what it started, removes its folder and exits 130', async () => {
    const tmp = tempDir('tv-demo-tmp-')
    const tag = randomUUID()
    const child = spawn(process.execPath, [bin, 'demo', '--toolbox', examples], {
      env: { ...process.env, TMPDIR: tmp, TV_TEST_TAG: tag },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    child.stdout!.on('data', (chunk) => (stdout += chunk))
    const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)))
    // Services running: the demo is in the middle of its work.
    expect(await eventually(() => stdout.includes('\n8. A service'), 30_000), stdout).toBe(true)
    expect(readdirSync(tmp).filter((name) => name.startsWith('toolvisor-demo-'))).toHaveLength(1)
    child.kill('SIGINT')
    expect(await exited).toBe(130)
    expect(readdirSync(tmp)).toEqual([])
    expect(await eventually(() => tagged(tag).length === 0, 5000), 'processes left running').toBe(true)
  }, 60_000)

  it("shows each item of the demo's listings on its own line, so no mail hides behind a long one", () => {
    const long = { id: 'm1', from: 'task:t1', body: 'x'.repeat(700) }
    const late = { id: 'm2', from: 'process:p1', body: { line: 'ERROR disk full' } }
    const text = shown(JSON.stringify({ mail: [long, late] }))
    expect(text.split('\n')).toEqual([
      '{"mail":[',
      `  ${JSON.stringify(long).slice(0, 600)}…,`,
      `  ${JSON.stringify(late)}`,
      ']}',
    ])
    expect(shown(JSON.stringify({ error: 'y'.repeat(700) }))).toBe(
      `${JSON.stringify({ error: 'y'.repeat(700) }).slice(0, 600)}…`,
    )
    expect(shown('not json')).toBe('not json')
  })
})

describe('secrets from an envdir', () => {
  it('reach the tool and never appear in describe output, errors or logs', async () => {
    const { mkdirSync, writeFileSync } = await import('node:fs')
    const { tempDir } = await import('./helpers.js')
    const root = tempDir('tv-envroot-')
    mkdirSync(join(root, 'vault'))
    writeFileSync(join(root, 'vault', 'API_TOKEN'), 's3cr3t-value\n')
    const box = tempDir('tv-envtool-')
    const tool = join(box, 'needs-token')
    writeFileSync(
      tool,
      `#!/bin/sh\ncase "$1" in\ndescribe) echo '{"protocol": 2, "slug": "needs_token", "description": "uses a token", "args": [], "runtime": {"envdir": "vault"}}' ;;\nrun) [ -n "$API_TOKEN" ] && echo "token of length \${#API_TOKEN}"; echo "failing on purpose" >&2; exit 4 ;;\nesac\n`,
      { mode: 0o755 },
    )
    const described = await run(['describe', tool, '--json', '--envdir-root', root])
    expect(described.code).toBe(0)
    expect(JSON.parse(described.stdout).runtime.envdir).toBe('vault')
    const called = await run(['call', tool, '--envdir-root', root])
    expect(called.code).toBe(1)
    expect(called.stdout).toBe(
      'needs_token failed: exit code 4\n--- stdout ---\ntoken of length 12\n--- stderr ---\nfailing on purpose\n',
    )
    for (const output of [described.stdout, described.stderr, called.stdout, called.stderr])
      expect(output).not.toContain('s3cr3t')
    const refused = await run(['describe', tool])
    expect(refused.code).toBe(2)
    expect(refused.stderr).toBe(
      `toolvisor describe: ${tool}: $.runtime.envdir: declared, but no envdir root is configured: start toolvisor with --envdir-root DIR\n`,
    )
  })
})
