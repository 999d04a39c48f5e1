import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { fixtures, run, tempDir } from './helpers.js'
import { dir, hasBwrap, sandboxedTool } from './sandbox-helpers.js'

const web = join(fixtures, 'web')

/** Writes a toolvisor.json (paths relative to it) and returns its path. */
function configFile(config: Record<string, unknown>): string {
  const dir = tempDir('tv-check-')
  const file = join(dir, 'toolvisor.json')
  writeFileSync(file, JSON.stringify({ stateDir: 'state', ...config }))
  return file
}

const three = (required = true) => ({
  capabilities: [
    {
      capability: 'web_read',
      required,
      backends: [join(web, 'read-jina'), join(web, 'read-curl'), join(web, 'read-lynx')],
    },
  ],
})

describe('toolvisor check', () => {
  it('--probe --json reports per capability the active backend and every candidate', async () => {
    const { code, stdout } = await run(['check', '--config', configFile(three()), '--probe', '--json'])
    expect(code).toBe(0)
    expect(JSON.parse(stdout)).toEqual({
      capabilities: [
        {
          capability: 'web_read',
          active: 'read-curl',
          backends: [
            {
              name: 'read-jina',
              status: 'failed',
              ms: expect.any(Number),
              detail: 'check exited with code 1: jina reader answered 429',
              fix: 'set JINA_API_KEY in the envdir',
            },
            { name: 'read-curl', status: 'ok', ms: expect.any(Number) },
            {
              name: 'read-lynx',
              status: 'unverified',
              detail: 'the tool declares no check: it loaded, nothing more is known',
            },
          ],
        },
      ],
      tools: [],
      serves: ['processes', 'web_read'],
      runtime: {
        sandbox: null,
        state: { path: expect.any(String), bytes: expect.any(Number), budget: 1024 ** 3 },
        lost: [],
        kept: [],
        execHelper: { available: true, path: expect.stringMatching(/\/toolvisor-exec$/) },
        forkServer: { available: true, path: expect.stringMatching(/\/toolvisor-spawnd$/) },
        // Allow lists run through the network gates, whose namespace helper this build made.
        network: {
          gates: { available: true, namespaceHelper: expect.stringMatching(/\/toolvisor-netns$/) },
          host: true,
        },
        // Where launches are contained: a cgroup per launch (root), else why not (an ordinary user).
        containment: {
          cgroup: expect.objectContaining({ available: process.geteuid?.() === 0 }),
          defaults: expect.objectContaining({ values: expect.any(Object), enforcedBy: expect.any(Object) }),
        },
        ...(process.geteuid?.() === 0 ? { sandboxUser: 'nobody' } : {}),
        environment: {
          inherit: 'core for sandboxed tools, all for the others',
          excludes: ['*KEY*', '*SECRET*', '*TOKEN*', '*PASSWORD*'],
          core: ['PATH', 'HOME', 'USER', 'LANG', 'LC_*', 'TERM', 'TZ', 'TMPDIR', 'SHELL'],
        },
      },
    })
  })

  it('shows the effective environment policy and the sandbox user', async () => {
    const file = configFile({
      sandbox: 'bwrap',
      sandboxUser: 'nobody',
      environment: { inherit: 'none', exclude: ['AWS_*'], set: { LANG: 'C.UTF-8' } },
    })
    const { code, stdout } = await run(['check', '--config', file])
    expect(code).toBe(0)
    const runtime = stdout.slice(stdout.indexOf('runtime\n'))
    expect(runtime).toContain('  sandbox: bwrap\n')
    if (process.geteuid?.() === 0) {
      expect(runtime).toContain('  sandbox user: nobody (sandboxed tools that declare no run_as run as it)\n')
    }
    expect(runtime).toContain(
      '  environment: inherit none; never *KEY*, *SECRET*, *TOKEN*, *PASSWORD*, AWS_*; set LANG; core is PATH, HOME, USER, LANG, LC_*, TERM, TZ, TMPDIR, SHELL\n',
    )
  })

  it('with --sandbox auto, says what auto chose: each sandboxed tool its mechanism, counted', async () => {
    // Only this toolbox, where the sandbox user can read it: with a mechanism configured every
    // describe runs as that user, and a clone in a 0700 folder keeps the examples out of its reach.
    const box = dir('tv-check-auto-')
    sandboxedTool(box, 'boxed', { sandbox: { net: 'none' } })
    const { code, stdout } = await run([
      'check',
      '--toolbox',
      box,
      '--sandbox',
      'auto',
      '--state-dir',
      tempDir(),
    ])
    expect(code).toBe(0)
    // The first of bwrap, landlock that honours it: bwrap where it runs, else landlock.
    const mechanism = /\n {4}boxed .* sandbox (bwrap|landlock)\b/.exec(stdout)?.[1]
    expect(mechanism, stdout).toBeDefined()
    expect(stdout).toContain(
      `  sandbox: auto: each sandboxed tool gets the first of bwrap, landlock that honours its declaration; here ${mechanism} for 1 tool\n`,
    )
  })

  it('puts an overridden backend first, still inactive when its probe failed, and says why', async () => {
    const { code, stdout } = await run([
      'check',
      '--config',
      configFile(three()),
      '--probe',
      '--backend',
      'web_read=read-jina',
    ])
    expect(code).toBe(0)
    expect(
      stdout
        .split('\n')
        .slice(0, 4)
        .map((l) => l.replace(/ +\d+ ms/, ' N ms')),
    ).toEqual([
      'capabilities',
      '  web_read (required): active read-curl',
      '    read-jina            failed N ms  check exited with code 1: jina reader answered 429; fix: set JINA_API_KEY in the envdir',
      '    read-curl            ok N ms',
    ])
  })

  it('ignores an unknown override with a warning and changes nothing else', async () => {
    const { code, stdout } = await run([
      'check',
      '--config',
      configFile(three()),
      '--probe',
      '--json',
      '--backend',
      'web_read=read-gone',
    ])
    expect(code).toBe(0)
    const doc = JSON.parse(stdout)
    expect(doc.capabilities[0].active).toBe('read-curl')
    expect(doc.capabilities[0].backends.map((b: { name: string }) => b.name)).toEqual([
      'read-jina',
      'read-curl',
      'read-lynx',
    ])
    expect(doc.warnings).toEqual([
      '--backend web_read=read-gone: web_read has no backend named "read-gone" (its backends: read-jina, read-curl, read-lynx); the override is ignored',
    ])
  })

  it('exits 1 when backends differ on an argument, naming it', async () => {
    const config = configFile({
      capabilities: [{ capability: 'web_read', backends: [join(web, 'read-curl'), join(web, 'read-odd')] }],
    })
    const { code, stdout } = await run(['check', '--config', config, '--json'])
    expect(code).toBe(1)
    expect(JSON.parse(stdout).errors).toEqual([
      `${join(web, 'read-odd')}: $.args[0]: capability web_read: argument "url" differs between backends: integer, single in read-odd, string, single in read-curl; every backend must expose the same arguments (names, backing types, arity)`,
    ])
  })

  it('exits 1 on a configuration file that does not load, naming the field', async () => {
    const { code, stderr } = await run([
      'check',
      '--config',
      configFile({ capabilities: [{ capability: 'web read', backends: [] }] }),
    ])
    expect(code).toBe(1)
    expect(stderr).toMatch(
      /^toolvisor check: the configuration does not load:\n {2}.*toolvisor\.json: \$\.capabilities\[0\]\.capability: /,
    )
  })

  it('exits 2 with --probe when a required capability has no active backend; mcp refuses to start with the same message', async () => {
    const config = configFile({
      capabilities: [{ capability: 'web_read', backends: [join(web, 'read-jina')] }],
    })
    const plain = await run(['check', '--config', config])
    expect(plain.code).toBe(0)
    const probe = await run(['check', '--config', config, '--probe'])
    expect(probe.code).toBe(2)
    expect(probe.stdout).toContain('web_read (required): NO ACTIVE BACKEND')
    const mcp = await run(['mcp', '--config', config, '--toolbox', tempDir(), '--allow-empty'])
    expect(mcp.code).toBe(2)
    expect(mcp.stderr).toBe(
      'toolvisor mcp: web_read: capability web_read has no usable backend: read-jina: failed (check exited with code 1: jina reader answered 429); it is required\n',
    )
  })

  it('leaves an optional capability with no backend out, with a warning', async () => {
    const config = configFile({
      capabilities: [{ capability: 'web_read', required: false, backends: [join(web, 'read-jina')] }],
    })
    const { code, stdout } = await run(['check', '--config', config, '--probe', '--json'])
    expect(code).toBe(0)
    const doc = JSON.parse(stdout)
    expect(doc.capabilities[0].active).toBeNull()
    expect(doc.warnings).toEqual([
      'capability web_read has no usable backend: read-jina: failed (check exited with code 1: jina reader answered 429); it is optional and left out',
    ])
    const mcp = await run(['mcp', '--config', config, '--toolbox', tempDir(), '--allow-empty'], { input: '' })
    expect(mcp.code).toBe(0)
    expect(mcp.stderr).toMatch(
      /warning: capability web_read has no usable backend: .*; it is optional and left out\n/,
    )
  })

  it('cuts a probe that hangs at its bound and reports it failed', async () => {
    const config = configFile({
      checkTimeoutMs: 500,
      capabilities: [{ capability: 'web_read', backends: [join(web, 'read-slow'), join(web, 'read-curl')] }],
    })
    const { code, stdout } = await run(['check', '--config', config, '--probe', '--json'])
    expect(code).toBe(0)
    const [slow, curl] = JSON.parse(stdout).capabilities[0].backends
    expect(slow).toMatchObject({
      name: 'read-slow',
      status: 'failed',
      detail: 'check did not answer within 0.5 s',
    })
    expect(curl).toMatchObject({ name: 'read-curl', status: 'ok' })
  })

  it('reports each tool of the toolboxes with its status', async () => {
    const config = configFile({ toolboxes: [web], checkTimeoutMs: 500 })
    const { code, stdout } = await run(['check', '--config', config, '--probe', '--json'])
    expect(code).toBe(0)
    const tools = JSON.parse(stdout).tools.map((t: { tool: string; status: string }) => [t.tool, t.status])
    expect(tools).toEqual(
      expect.arrayContaining([
        ['read_curl', 'ok'],
        ['read_jina', 'failed'],
        ['read_lynx', 'unverified'],
        ['read_slow', 'failed'],
      ]),
    )
  })
})

describe('toolvisor check tells the truth', () => {
  it.skipIf(!hasBwrap)('does not reuse a result measured under another mechanism', async () => {
    const box = dir('tv-check-box-')
    const counts = dir('tv-check-counts-', 0o777)
    sandboxedTool(
      box,
      'counted',
      { sandbox: { fs: { write: [counts] } } },
      `echo run >> ${counts}/runs; echo '{"ok": true}'`,
    )
    const stateDir = tempDir('tv-check-state-')
    const check = async (sandbox: string) => {
      const { code, stdout } = await run([
        'check',
        '--toolbox',
        box,
        '--sandbox',
        sandbox,
        '--state-dir',
        stateDir,
        '--json',
      ])
      expect(code).toBe(0)
      return JSON.parse(stdout).tools.map((t: { tool: string; status: string; mechanism: string }) => [
        t.tool,
        t.status,
        t.mechanism,
      ])
    }
    const runs = () => readFileSync(join(counts, 'runs'), 'utf8')
    expect(await check('landlock')).toEqual([['counted', 'ok', 'landlock']])
    expect(runs()).toBe('run\n')
    expect(await check('bwrap')).toEqual([['counted', 'ok', 'bwrap']])
    expect(runs()).toBe('run\nrun\n')
    // Each result is kept under its own key: both are fresh now.
    await check('landlock')
    await check('bwrap')
    expect(runs()).toBe('run\nrun\n')
  })

  it('reports a sandbox declaration with no mechanism configured as failed, and exits 1', async () => {
    const box = dir('tv-check-box-')
    sandboxedTool(box, 'boxed', { sandbox: { net: 'none' } })
    const { code, stdout } = await run(['check', '--toolbox', box, '--state-dir', tempDir(), '--json'])
    expect(code).toBe(1)
    const doc = JSON.parse(stdout)
    const message = `${box}/boxed: $.runtime.sandbox: declared, but no sandbox mechanism is configured: start toolvisor with --sandbox bwrap, landlock or auto`
    expect(doc.tools).toEqual([{ tool: 'boxed', status: 'failed', detail: message }])
    expect(doc.errors).toEqual([message])
  })

  it('shows which arguments take a leading "-" by the operator\'s allowDash, and warns for names that reach nothing', async () => {
    const compat = join(fixtures, 'compat')
    const allowDash = { write_content: ['content', 'contnet'], write_flie: true }
    const config = configFile({ toolboxes: [{ path: compat, allowDash }] })
    const text = await run(['check', '--config', config])
    expect(text.code).toBe(0)
    const row = text.stdout.split('\n').find((line) => line.includes('write_content'))
    expect(row).toContain('leading "-" taken by content (operator)')
    expect(text.stdout).toContain(
      `${compat}/write-content: allowDash names "contnet", which write_content does not declare (its arguments are filepath, content, check_action)`,
    )
    expect(text.stdout).toContain(
      `${compat}: allowDash names the tool "write_flie", which this toolbox does not load`,
    )
    const json = JSON.parse((await run(['check', '--config', config, '--json'])).stdout)
    const tools = json.tools as Array<{ tool: string; allowDash?: unknown }>
    expect(tools.find((t) => t.tool === 'write_content')?.allowDash).toEqual([
      { argument: 'content', by: 'operator' },
    ])
    expect(tools.find((t) => t.tool === 'write_file')).not.toHaveProperty('allowDash')
  })

  it('lists files that are not tools apart, as neither tools nor errors', async () => {
    const box = tempDir('tv-check-box-')
    writeFileSync(join(box, 'README.md'), '# tools\n')
    const { code, stdout } = await run(['check', '--toolbox', box, '--state-dir', tempDir()])
    expect(code).toBe(0)
    expect(stdout).toContain(`not tools (no execute bit, or an editor backup)\n  ${box}/README.md\n`)
  })
})
