/**
 * The configuration file covers every flag of every command (issue 15, decision 0080): one table
 * gives each flag its key, `--help` and its parsing; the committed JSON Schema is what the zod
 * schema gives; `toolvisor check --config` lists every problem with its JSON path.
 */
import { chmodSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parseConfig } from '../src/config.js'
import { compose } from '../src/internal/compose.js'
import { allFlags, configOf, flagsOf, schemaAt } from '../src/internal/flags.js'
import { COMMANDS } from '../src/internal/options.js'
import { configJsonSchema } from '../src/json-schema.js'
import { eventually, examples, run, tempDir, toolvisor } from './helpers.js'
import { connect } from './serve-helpers.js'

const cli = resolve(import.meta.dirname, '..')

/** The JSON Schema's node at a dot path. */
function jsonSchemaAt(schema: Record<string, unknown>, key: string): unknown {
  return key.split('.').reduce<Record<string, unknown> | undefined>((at, part) => {
    const properties = at?.properties as Record<string, Record<string, unknown>> | undefined
    return properties?.[part]
  }, schema)
}

function configFile(json: unknown, dir = tempDir()): string {
  const file = join(dir, 'toolvisor.json')
  writeFileSync(file, typeof json === 'string' ? json : JSON.stringify(json))
  return file
}

describe('every flag of every command', () => {
  it('sets a key of toolvisor.json (in the zod schema and the JSON Schema), or says why it is per-invocation', () => {
    const schema = configJsonSchema()
    const missing: string[] = []
    for (const command of COMMANDS) {
      const names = flagsOf(command).map((flag) => flag.flag)
      expect(new Set(names).size, `${command} lists a flag twice`).toBe(names.length)
      for (const flag of flagsOf(command)) {
        const where = `${command} --${flag.flag}`
        if ('perInvocation' in flag) {
          if (flag.perInvocation.length < 20) missing.push(`${where}: per-invocation without a reason`)
        } else if (!schemaAt(flag.key) || !jsonSchemaAt(schema, flag.key)) {
          missing.push(`${where}: ${flag.key} is no key of toolvisor.json`)
        }
      }
    }
    expect(missing).toEqual([])
    const perInvocation = allFlags().filter((flag) => 'perInvocation' in flag)
    expect(perInvocation.map((flag) => flag.flag)).toEqual([
      'config',
      'command',
      'probe',
      'reap',
      'json',
      'help',
    ])
  })

  it('comes from the table: no command declares a flag of its own', () => {
    const dir = join(cli, 'src', 'commands')
    const own = readdirSync(dir).filter((name) =>
      /parseArgs\(|type: '(string|boolean)'/.test(readFileSync(join(dir, name), 'utf8')),
    )
    expect(own).toEqual([])
  })

  it('is in its command --help, with its argument', async () => {
    for (const command of COMMANDS) {
      const { stdout } = await run([command, '--help'])
      for (const flag of flagsOf(command)) {
        expect(stdout).toContain(`--${flag.flag}${flag.arg ? ` ${flag.arg}` : ''}`)
      }
    }
  })

  it('overrides the file; repeatable flags add to its items; paths are the file’s or the working directory’s', () => {
    const dir = tempDir()
    const config = configFile(
      {
        toolboxes: ['box'],
        serve: {
          listen: 'unix:sock',
          sessionTtlSeconds: 60,
          tokenFile: 'token',
          allowOrigins: ['http://a:1'],
        },
        limits: { maxConcurrentCalls: 4 },
        backends: { web_read: 'read-jina' },
      },
      dir,
    )
    const fromFile = configOf('serve', { config })
    expect(fromFile.serve).toEqual({
      listen: `unix:${join(dir, 'sock')}`,
      sessionTtlSeconds: 60,
      tokenFile: join(dir, 'token'),
      allowOrigins: ['http://a:1'],
    })
    const flagged = configOf('serve', {
      config,
      'session-ttl': '5',
      'token-file': 'here',
      'allow-origin': ['http://b:2'],
      toolbox: ['other'],
      backend: ['web_read=read-curl'],
      'max-concurrent-calls': '8',
    })
    expect(flagged.serve).toMatchObject({
      sessionTtlSeconds: 5,
      tokenFile: resolve('here'),
      allowOrigins: ['http://a:1', 'http://b:2'],
    })
    expect(flagged.toolboxes).toEqual([join(dir, 'box'), resolve('other')])
    expect(flagged.backends).toEqual({ web_read: 'read-curl' })
    expect(flagged.limits).toEqual({ maxConcurrentCalls: 8 })
  })

  it('refuses a value that does not fit its key, naming the flag', () => {
    const cases: [string, Record<string, string>, string][] = [
      ['serve', { 'session-ttl': '0' }, '--session-ttl: expected a positive whole number, got "0"'],
      ['serve', { listen: 'nowhere' }, '--listen nowhere: expected HOST:PORT (127.0.0.1:8765) or unix:PATH'],
      ['mcp', { 'max-queued-calls': '-1' }, '--max-queued-calls: expected a whole number, got "-1"'],
      ['mcp', { 'bash-profile': 'zsh' }, '--bash-profile zsh: expected one of dsh, hyperhive, toolnexus'],
      ['call', { 'yield-ms': '1.5' }, '--yield-ms: expected a whole number, got "1.5"'],
    ]
    for (const [command, values, message] of cases) {
      expect(() => configOf(command as 'serve', values)).toThrow(message)
    }
  })

  it('turns the bash tools on with any bash flag, even when the file switches them off', () => {
    const config = configFile({ bash: { enabled: false } })
    expect(configOf('mcp', { config, 'bash-profile': 'hyperhive' }).bash).toMatchObject({
      enabled: true,
      profile: 'hyperhive',
    })
  })
})

describe('the documented examples of toolvisor.json', () => {
  it('are valid: the CLI README (every key), the README, the operating guide', () => {
    const root = resolve(cli, '..', '..')
    const pages = ['packages/cli/README.md', 'README.md', 'docs/guides/operating.md']
    let checked = 0
    for (const page of pages) {
      const text = readFileSync(join(root, page), 'utf8')
      for (const [, json] of text.matchAll(/```json\n(\{\n {2}"\$schema"[\s\S]*?)```/g)) {
        expect(() => parseConfig(JSON.parse(json!), join(root, 'toolvisor.json')), page).not.toThrow()
        checked += 1
      }
    }
    expect(checked).toBe(pages.length)
  })
})

describe('keys without a flag', () => {
  it('reach the package they configure (stateBytes: the runtime, as docs/guides/operating.md says)', async () => {
    const dir = tempDir()
    const config = configOf('check', { config: configFile({ stateBytes: 12_345, stateDir: 'state' }, dir) })
    const composed = await compose(config, { loadToolboxes: false })
    try {
      expect(composed.runtime.options).toMatchObject({ stateBytes: 12_345, stateDir: join(dir, 'state') })
    } finally {
      await composed.kernel.dispose()
    }
  })
})

describe('digestFlushMs', () => {
  it("reaches the mailbox: the events short of a digest's n are mailed once it passed", async () => {
    const config = configOf('check', { config: configFile({ digestFlushMs: 50 }) })
    const composed = await compose(config, { loadToolboxes: false })
    try {
      const { mailbox } = composed
      mailbox.open('s1')
      const source = mailbox.source('s1', 'process:p1', { per: 'events', n: 3 })
      source.push({ line: 'one' })
      expect(mailbox.deliver('s1').envelopes).toEqual([])
      expect(await eventually(() => mailbox.unread('s1') === 1)).toBe(true)
      expect(mailbox.deliver('s1').envelopes.map((e) => e.body)).toEqual([{ line: 'one' }])
    } finally {
      await composed.kernel.dispose()
    }
  })
})

describe('the JSON Schema of toolvisor.json', () => {
  it('is committed as the zod schema gives it (run `pnpm schema` after changing a key)', () => {
    const committed = JSON.parse(readFileSync(join(cli, 'toolvisor.schema.json'), 'utf8'))
    expect(committed).toEqual(configJsonSchema())
  })

  it('describes each flag’s key with the flag’s help, and allows "$schema"', () => {
    const schema = configJsonSchema()
    expect(jsonSchemaAt(schema, 'serve.sessionTtlSeconds')).toMatchObject({
      type: 'integer',
      minimum: 1,
      description: 'how long an idle session lives (default 900) (flag --session-ttl)',
    })
    expect(jsonSchemaAt(schema, 'stateDir')).toMatchObject({
      description: expect.stringContaining('--state-dir'),
    })
    expect(() => parseConfig({ $schema: './toolvisor.schema.json' }, undefined)).not.toThrow()
  })
})

describe('toolvisor check --config', () => {
  it('lists every problem of a broken file with its JSON path, what was expected and what was found; exit 1', async () => {
    const file = configFile({
      toolboxs: ['box'],
      serve: { listen: 'nowhere', sesionTtlSeconds: 5, allowRemote: 'yes' },
      limits: { maxQueuedCalls: -1 },
      capabilities: [{ capability: 'web_read', backends: ['x'], requird: true }],
    })
    const { code, stderr } = await run(['check', '--config', file])
    expect(code).toBe(1)
    expect(stderr.split('\n').sort()).toEqual(
      [
        'toolvisor check: the configuration does not load:',
        `  ${file}: $.toolboxs: unknown key; did you mean "toolboxes"?`,
        `  ${file}: $.serve.sesionTtlSeconds: unknown key; did you mean "sessionTtlSeconds"?`,
        `  ${file}: $.serve.listen: expected HOST:PORT (127.0.0.1:8765) or unix:PATH, got "nowhere"`,
        `  ${file}: $.serve.allowRemote: expected boolean, got "yes"`,
        `  ${file}: $.limits.maxQueuedCalls: Too small: expected number to be >=0, got -1`,
        `  ${file}: $.capabilities[0].requird: unknown key; did you mean "required"?`,
        '',
      ].sort(),
    )
  })

  it('names a missing file, a file that is not JSON, a wrong type at the top and an unknown nested key', async () => {
    const dir = tempDir()
    const cases: [string, string][] = [
      [join(dir, 'absent.json'), `${join(dir, 'absent.json')}: cannot read the configuration: ENOENT`],
      [configFile('{"toolboxes": [', tempDir()), 'not JSON: '],
      [configFile('[]', tempDir()), ': $: expected object, got []'],
      [
        configFile({ mcp: { sesion: 'a' } }, tempDir()),
        ': $.mcp.sesion: unknown key; did you mean "session"?',
      ],
      [configFile({ call: { yieldMs: '5' } }, tempDir()), ': $.call.yieldMs: expected number, got "5"'],
      [configFile({ mcp: 3 }, tempDir()), ': $.mcp: expected object, got 3'],
      // A toolbox entry is a string or an object: the object's own field is named, not the entry.
      [
        configFile({ toolboxes: [{ path: 'box', allowDash: ['content'] }] }, tempDir()),
        ': $.toolboxes[0].allowDash: expected true or an object, got ["content"]',
      ],
      [
        configFile({ toolboxes: [{ path: 'box', alowDash: true }] }, tempDir()),
        ': $.toolboxes[0].alowDash: unknown key; did you mean "allowDash"?',
      ],
      [configFile({ toolboxes: [3] }, tempDir()), ': $.toolboxes[0]: expected string or object, got 3'],
      // bash.network's entries are checked as the network gates check them (decision 0112).
      [
        configFile(
          { bash: { sandbox: 'workspace-write', network: { allow: ['ok.test', 'https://x.test'] } } },
          tempDir(),
        ),
        ': $.bash.network.allow[1]: "https://x.test" names a scheme; give the host alone ("x.test"), got "https://x.test"',
      ],
      [
        configFile({ bash: { sandbox: 'read-only', network: 'all' } }, tempDir()),
        ': $.bash.network: expected "host" or "none" or object, got "all"',
      ],
    ]
    for (const [file, message] of cases) {
      const { code, stderr } = await run(['check', '--config', file])
      expect(code, file).toBe(1)
      expect(stderr).toContain(message)
    }
  })

  it('passes a file that uses every section', async () => {
    // The bash mode's working directory must be one the sandbox user reaches: not the checkout,
    // which may sit below a directory only root enters (CI's clone does).
    const workdir = tempDir()
    chmodSync(workdir, 0o755)
    const file = configFile({
      $schema: '../toolvisor.schema.json',
      serve: { listen: '127.0.0.1:0', maxSessions: 10, uiControl: false },
      mcp: { session: 'agent-1', loadFirst: true },
      limits: { progressBurst: 5 },
      call: { progress: true },
      sandbox: 'bwrap',
      bash: {
        sandbox: 'read-only',
        workdir,
        network: { allow: ['registry.npmjs.org', '*.github.com'], deny: [] },
      },
    })
    const { code, stderr } = await run(['check', '--config', file])
    expect(stderr).toBe('')
    expect(code).toBe(0)
  })
})

describe('toolvisor serve --config', () => {
  it('takes its listener, token file and bounds from the file alone', async () => {
    const dir = tempDir()
    const file = configFile(
      {
        toolboxes: [examples],
        stateDir: 'state',
        serve: { listen: '127.0.0.1:0', tokenFile: 'token', maxSessions: 2 },
      },
      dir,
    )
    writeFileSync(join(dir, 'token'), `${'t'.repeat(40)}\n`, { mode: 0o600 })
    const { child, done } = toolvisor(['serve', '--config', file])
    let stderr = ''
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')))
    expect(await eventually(() => / at http:\/\/\S+\/mcp /.test(stderr), 20_000), stderr).toBe(true)
    expect(stderr).toContain(`(bearer token in ${join(dir, 'token')})`)
    const url = / at (http:\/\/\S+\/mcp) /.exec(stderr)![1]!
    const { client } = await connect(url, 't'.repeat(40))
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('word_count')
    await client.close()
    child.kill('SIGTERM')
    expect((await done).code).toBe(0)
  })
})
