// The bash tools' network (decision 0112) under the real mechanisms, with real curl and npm, real
// servers on 127.0.0.1 and the network gates' proxy resolving names from a fixed map (the test
// seam). The confining modes' default network is an allow list that starts empty: a blocked name
// is marked and hinted, asked for once with network_allow (the user approves it through the
// `approval` seam, here a host's own service), and the next call is blocked again. `host` is the
// operator's way back to seed 001's open network, `none` no network at all. Run as root, commands
// run as the sandbox user (nobody).
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { NETWORK_TEXTS } from '../src/network.js'
import { compose } from './helpers.js'
import { registry, site, TINY } from './network-helpers.js'
import { answering, MECHANISMS, openDir } from './sandbox-helpers.js'

const LOCAL = ['127.0.0.1']
const WHY = 'The test fetches its page.'
const curl = (host: string, port: number) => ({
  command: `curl -sS -f http://${host}:${port}/`,
  description: 'Fetch the page',
})
const marker = (host: string, port: number, reason = 'not in the allow list') =>
  `[network: blocked ${host}:${port}, ${reason}]`
const hint = (hosts: string) =>
  `[network: escalation available — retry this exact command once with network_allow ${hosts} + justification; the approval prompt asks the user]`

describe.each(MECHANISMS)('the bash network under %s (decision 0112)', (mechanism) => {
  it('the default list blocks an unlisted name with the marker and the hint; allowed once, it reaches it once', async () => {
    const work = openDir('work')
    const page = await site()
    const approval = answering('allowed-once')
    const { call } = await compose(
      { sandbox: 'workspace-write', workdir: work },
      { sandbox: mechanism, approval, names: { 'unlisted.test': LOCAL } },
    )
    const blocked = await call('bash', curl('unlisted.test', page.port))
    expect(blocked.text).toContain(marker('unlisted.test', page.port))
    expect(blocked.text.endsWith(`\n${hint('["unlisted.test"]')}\n[exit code: 22]`)).toBe(true)
    expect(page.requests).toEqual([])

    const once = await call('bash', {
      ...curl('unlisted.test', page.port),
      network_allow: ['unlisted.test'],
      justification: WHY,
    })
    expect(once.text).toBe('hello from the host\n')
    expect(page.requests).toEqual(['GET /'])
    expect(approval.asked).toMatchObject([
      {
        sessionId: 'alice',
        tool: 'bash',
        command: `curl -sS -f http://unlisted.test:${page.port}/`,
        justification: WHY,
        workdir: work,
        background: false,
        mode: 'workspace-write',
        network: ['unlisted.test'],
      },
    ])

    const again = await call('bash', curl('unlisted.test', page.port))
    expect(again.text).toContain(marker('unlisted.test', page.port))
    expect(page.requests).toEqual(['GET /'])
    expect(approval.asked).toHaveLength(1)
  })

  it('rejected, cancelled and unavailable run nothing; the server sees no request', async () => {
    const page = await site()
    for (const [outcome, text] of [
      ['rejected', 'the user rejected letting this command reach "unlisted.test"'],
      ['cancelled', 'approval for letting this command reach "unlisted.test" was cancelled'],
      [
        'unavailable',
        'network escalation to "unlisted.test" requires approval, but no approval channel is available',
      ],
    ] as const) {
      const approval = answering(outcome)
      const { call } = await compose(
        { sandbox: 'workspace-write', workdir: openDir('work') },
        { sandbox: mechanism, approval, names: { 'unlisted.test': LOCAL } },
      )
      const args = {
        ...curl('unlisted.test', page.port),
        network_allow: ['unlisted.test'],
        justification: WHY,
      }
      expect(await call('bash', args)).toMatchObject({ isError: true, text: `Error: ${text}` })
      expect(approval.asked).toHaveLength(1)
    }
    expect(page.requests).toEqual([])
  })
})

describe('the bash network under bwrap: the operator list, the arguments, host and none', () => {
  it('asks for the mode and the names in one question, and the texts name both', async () => {
    const work = openDir('work')
    const page = await site()
    const approval = answering('rejected')
    const { call } = await compose(
      { sandbox: 'read-only', workdir: work },
      { sandbox: 'bwrap', approval, names: { 'unlisted.test': LOCAL } },
    )
    const both = await call('bash', {
      command: `curl -sS -f -o page http://unlisted.test:${page.port}/`,
      description: 'Save the page',
      sandbox_permissions: 'workspace-write',
      network_allow: ['unlisted.test'],
      justification: WHY,
    })
    expect(both.text).toBe(
      'Error: the user rejected escalating this command to "workspace-write" with network access to "unlisted.test"',
    )
    expect(approval.asked).toMatchObject([{ mode: 'workspace-write', network: ['unlisted.test'] }])
    expect(page.requests).toEqual([])
    expect(existsSync(join(work, 'page'))).toBe(false)
  })

  it('refuses a bad entry, a denied one, a missing justification and a justification alone, asking no one', async () => {
    const page = await site()
    const approval = answering('allowed-once')
    const { call } = await compose(
      {
        sandbox: 'workspace-write',
        workdir: openDir('work'),
        network: { allow: ['listed.test'], deny: ['*.evil.test'] },
      },
      { sandbox: 'bwrap', approval, names: { 'listed.test': LOCAL } },
    )
    const args = (extra: Record<string, unknown>) => ({ ...curl('listed.test', page.port), ...extra })
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ network_allow: ['unlisted.test'] }, NETWORK_TEXTS.needsJustification],
      [
        { justification: WHY },
        'invalid escalation: justification is only valid together with sandbox_permissions or network_allow',
      ],
      [
        { network_allow: ['ok.test', 'https://x.test/path'], justification: WHY },
        'invalid network_allow[1]: "https://x.test/path" names a scheme; give the host alone ("x.test")',
      ],
      [
        { network_allow: ['a.evil.test'], justification: WHY },
        `invalid network_allow[0]: "a.evil.test" is in the operator's deny list (bash.network.deny); no approval can allow it`,
      ],
      [
        { network_allow: [], justification: WHY },
        'invalid network_allow: expected an array of 1 to 16 network names ("registry.npmjs.org", "*.github.com", "host:port"), got []',
      ],
      [
        { network_allow: 'unlisted.test', justification: WHY },
        'invalid network_allow: expected an array of 1 to 16 network names ("registry.npmjs.org", "*.github.com", "host:port"), got "unlisted.test"',
      ],
    ]
    for (const [extra, text] of cases) {
      expect(await call('bash', args(extra)), JSON.stringify(extra)).toMatchObject({
        isError: true,
        text: `Error: ${text}`,
      })
    }
    expect(NETWORK_TEXTS.needsJustification).toBe(
      'invalid escalation: network_allow requires a justification',
    )
    expect(approval.asked).toEqual([])
    expect(page.requests).toEqual([])
    // A name the standing list already allows is not asked about: the command runs as it stands.
    const listed = await call(
      'bash',
      args({ network_allow: [`listed.test:${page.port}`], justification: WHY }),
    )
    expect(listed.text).toBe('hello from the host\n')
    expect(approval.asked).toEqual([])
  })

  it('no approval service, or a call with no session, fails closed with its own text', async () => {
    const page = await site()
    const { call, tools } = await compose(
      { sandbox: 'workspace-write', workdir: openDir('work') },
      { sandbox: 'bwrap', names: { 'unlisted.test': LOCAL } },
    )
    const args = { ...curl('unlisted.test', page.port), network_allow: ['unlisted.test'], justification: WHY }
    expect((await call('bash', args)).text).toBe(
      'Error: network escalation to "unlisted.test" requires approval, but no approval service is composed',
    )
    const withService = await compose(
      { sandbox: 'workspace-write', workdir: openDir('work') },
      { sandbox: 'bwrap', approval: answering('allowed-once'), names: { 'unlisted.test': LOCAL } },
    )
    const anonymous = await withService.tools.call('bash', args, { signal: AbortSignal.timeout(5000) })
    expect(anonymous.content[0]?.text).toBe(
      'Error: network escalation to "unlisted.test" requires approval, but the call has no agent to route it through',
    )
    expect(tools.get('bash')).toBeDefined()
    expect(page.requests).toEqual([])
  })

  it('hints only names not in the list: a deny-listed name gets the marker and no hint; past 8 names, how many more', async () => {
    const page = await site()
    const { call } = await compose(
      { sandbox: 'workspace-write', workdir: openDir('work'), network: { allow: [], deny: ['denied.test'] } },
      { sandbox: 'bwrap', names: { 'denied.test': LOCAL } },
    )
    const denied = await call('bash', curl('denied.test', page.port))
    // The marker comes as the proxy refuses, before curl reads the 403; no hint follows it.
    expect(denied.text).toBe(
      `[stderr]\n\n${marker('denied.test', page.port, 'in the deny list')}\ncurl: (22) The requested URL returned error: 403\n[exit code: 22]`,
    )
    const hosts = Array.from({ length: 11 }, (_, i) => `h${i + 1}.test`)
    const many = await call('bash', {
      command: hosts.map((host) => `curl -sS -f http://${host}:${page.port}/`).join('; '),
      description: 'Fetch eleven pages',
    })
    const names = hosts.slice(0, 8).map((host) => `"${host}"`)
    expect(many.text.endsWith(`\n${hint(`[${names.join(', ')}] and 3 more`)}\n[exit code: 22]`)).toBe(true)
    expect(page.requests).toEqual([])
  })

  it('a background task shows the hint when it ends: inline, and on every bash_output read', async () => {
    const page = await site()
    const { call } = await compose(
      { sandbox: 'workspace-write', workdir: openDir('work') },
      { sandbox: 'bwrap', names: { 'unlisted.test': LOCAL } },
    )
    const waited = await call('bash', {
      ...curl('unlisted.test', page.port),
      run_in_background: true,
      wait_seconds: 20,
    })
    expect(waited.text.endsWith(`\n${hint('["unlisted.test"]')}\n[exit code: 22]`)).toBe(true)
    const read = await call('bash_output', { task_id: 'bash-1' })
    expect(read.text).toBe(
      `(no new output)\n[status: completed, exit code: 22]\n${hint('["unlisted.test"]')}`,
    )
  })

  it('"host" reaches the host network directly, as seed 001 does, and shows no network_allow', async () => {
    const page = await site()
    const { call, tools } = await compose(
      { sandbox: 'workspace-write', workdir: openDir('work'), network: 'host' },
      { sandbox: 'bwrap', approval: answering('allowed-once') },
    )
    expect((await call('bash', curl('127.0.0.1', page.port))).text).toBe('hello from the host\n')
    expect(page.requests).toEqual(['GET /'])
    const schema = tools.get('bash')!.inputSchema as unknown as { properties: Record<string, unknown> }
    expect(Object.keys(schema.properties)).toContain('sandbox_permissions')
    expect(Object.keys(schema.properties)).not.toContain('network_allow')
  })

  it('the default list reaches nothing directly: the host loopback is not the sandbox one', async () => {
    const page = await site()
    const { call, tools } = await compose(
      { sandbox: 'workspace-write', workdir: openDir('work') },
      { sandbox: 'bwrap' },
    )
    const direct = await call('bash', curl('127.0.0.1', page.port))
    expect(direct.text).toMatch(/^\[stderr\]\ncurl: \(7\) .*\n\[exit code: 7\]$/)
    expect(page.requests).toEqual([])
    const schema = tools.get('bash')!.inputSchema as unknown as { properties: Record<string, unknown> }
    expect(Object.keys(schema.properties)).toEqual(expect.arrayContaining(['network_allow', 'justification']))
  })

  it('"none" gets no network, and no name can be asked for', async () => {
    const page = await site()
    const approval = answering('allowed-once')
    const { call } = await compose(
      { sandbox: 'workspace-write', workdir: openDir('work'), network: 'none' },
      { sandbox: 'bwrap', approval, names: { 'unlisted.test': LOCAL } },
    )
    const direct = await call('bash', curl('127.0.0.1', page.port))
    expect(direct.text).toMatch(/\[exit code: 7\]$/)
    const asked = await call('bash', {
      ...curl('unlisted.test', page.port),
      network_allow: ['unlisted.test'],
      justification: WHY,
    })
    expect(asked.text).toBe(`Error: ${NETWORK_TEXTS.none}`)
    expect(NETWORK_TEXTS.none).toBe(
      'network_allow is not available: the operator gives bash commands no network (bash.network "none")',
    )
    expect(approval.asked).toEqual([])
    expect(page.requests).toEqual([])
  })

  it('danger-full-access runs with the host network: names asked with it are not asked about', async () => {
    const page = await site()
    const approval = answering('allowed-once')
    const { call } = await compose(
      { sandbox: 'read-only', workdir: openDir('work') },
      { sandbox: 'bwrap', approval },
    )
    const full = await call('bash', {
      ...curl('127.0.0.1', page.port),
      sandbox_permissions: 'danger-full-access',
      network_allow: ['unlisted.test'],
      justification: WHY,
    })
    expect(full.text).toBe('hello from the host\n')
    expect(approval.asked).toHaveLength(1)
    expect(approval.asked[0]).not.toHaveProperty('network')
  })

  it('npm install in workspace-write reaches the registry the operator allows, through the proxy', async () => {
    const work = openDir('work')
    const npm = await registry('registry.test')
    const { call } = await compose(
      { sandbox: 'workspace-write', workdir: work, network: { allow: ['registry.test'], deny: [] } },
      { sandbox: 'bwrap', names: { 'registry.test': LOCAL } },
    )
    const installed = await call('bash', {
      command:
        `echo '{"name": "app", "private": true}' > package.json; ` +
        `export npm_config_registry=http://registry.test:${npm.port}/ npm_config_cache="$PWD/.npm-cache"; ` +
        `npm install --no-audit --no-fund --no-update-notifier --no-package-lock ${TINY.name}`,
      description: 'Install the tiny package',
      timeoutMs: 60_000,
    })
    expect(installed.text).toMatch(/added 1 package/)
    expect(installed.text).not.toContain('[network:')
    expect(readFileSync(join(work, 'node_modules', TINY.name, TINY.file), 'utf8')).toBe(TINY.text)
    expect(npm.requests).toEqual([
      `GET /${TINY.name}`,
      `GET /${TINY.name}/-/${TINY.name}-${TINY.version}.tgz`,
    ])
  })
})

describe('bash.network at start-up', () => {
  it('refuses an entry that is no name, naming network.allow[i], and a network with no confining mode', async () => {
    await expect(
      compose(
        { sandbox: 'workspace-write', network: { allow: ['ok.test', 'https://x.test'] } },
        { sandbox: 'bwrap' },
      ),
    ).rejects.toThrow(/network\.allow\.1|network\.allow\[1\]/)
    await expect(
      compose(
        { sandbox: 'workspace-write', network: { allow: ['ok.test', 'https://x.test'] } },
        { sandbox: 'bwrap' },
      ),
    ).rejects.toThrow('"https://x.test" names a scheme; give the host alone ("x.test")')
    await expect(compose({ network: 'none' })).rejects.toThrow(
      'confines the commands of the read-only and workspace-write sandbox modes only',
    )
    await expect(compose({ sandbox: 'danger-full-access', network: { allow: ['a.test'] } })).rejects.toThrow(
      'confines the commands of the read-only and workspace-write sandbox modes only',
    )
  })

  it('refuses a confining mode whose allow list nothing can enforce (no network gates), naming bash.network', async () => {
    await expect(
      compose(
        { sandbox: 'read-only', workdir: openDir('work') },
        { sandbox: 'bwrap', runtime: { network: {} } },
      ),
    ).rejects.toThrow(
      'tool-bash: the read-only sandbox mode cannot have its network (bash.network): an allow list needs the network gates (@toolvisor/network), and this runtime was composed without them; bash.network "host" gives the commands the host\'s network, "none" none',
    )
  })
})

describe('network_allow and the hint in each profile (bwrap)', () => {
  const toolnexusHint = (hosts: string) =>
    `[network: blocked names can be allowed for one run — call bash again with the same command, network_allow ${hosts} and a justification; the user approves them first]`

  it('toolnexus: the hint in its words, foreground and once a background shell ended; an approved name reaches once', async () => {
    const page = await site()
    const approval = answering('allowed-once')
    const { call, tools, tasks } = await compose(
      { profile: 'toolnexus', sandbox: 'workspace-write', workdir: openDir('work') },
      { sandbox: 'bwrap', approval, names: { 'unlisted.test': LOCAL } },
    )
    const schema = tools.get('bash')!.inputSchema as unknown as { properties: Record<string, unknown> }
    expect(Object.keys(schema.properties)).toEqual(expect.arrayContaining(['network_allow', 'justification']))
    expect(Object.keys(schema.properties)).not.toContain('sandbox_permissions')
    const blocked = await call('bash', curl('unlisted.test', page.port))
    expect(blocked.text.endsWith(`\n${toolnexusHint('["unlisted.test"]')}\n[exit code: 22]`)).toBe(true)
    const started = await call('bash', { ...curl('unlisted.test', page.port), run_in_background: true })
    const id = started.result.meta!.backgroundId as string
    await tasks.wait(id, 'alice', 20_000, AbortSignal.timeout(20_000))
    const read = await call('bash_output', { id })
    expect(read.text.endsWith(`[status: exited with code 22]\n${toolnexusHint('["unlisted.test"]')}`)).toBe(
      true,
    )
    expect((await call('bash', { ...curl('unlisted.test', page.port), justification: WHY })).text).toBe(
      'Error: invalid escalation: justification is only valid together with network_allow',
    )
    const once = await call('bash', {
      ...curl('unlisted.test', page.port),
      network_allow: ['unlisted.test'],
      justification: WHY,
    })
    expect(once.text).toBe('hello from the host\n')
    expect(approval.asked).toMatchObject([
      { mode: 'workspace-write', network: ['unlisted.test'], background: false },
    ])
    expect(page.requests).toEqual(['GET /'])
  })

  it('hyperhive: network_hint in the status JSON of an ended task; run asks for names as a background task', async () => {
    const page = await site()
    const approval = answering('allowed-once')
    const work = openDir('work')
    const { call, tools } = await compose(
      { profile: 'hyperhive', sandbox: 'workspace-write', workdir: work },
      { sandbox: 'bwrap', approval, names: { 'unlisted.test': LOCAL } },
    )
    const schema = tools.get('run')!.inputSchema as unknown as { properties: Record<string, unknown> }
    expect(Object.keys(schema.properties)).toEqual(expect.arrayContaining(['network_allow', 'justification']))
    const cmd = `curl -sS -f http://unlisted.test:${page.port}/`
    const blocked = JSON.parse((await call('run', { cmd, wait_seconds: 20 })).text) as Record<string, unknown>
    expect(blocked).toMatchObject({
      status: 'done',
      exit_code: 22,
      network_hint:
        'blocked: not in the allow list; to reach them once, run the same cmd again with network_allow ["unlisted.test"] and a justification (the user approves them first)',
    })
    expect(blocked.stderr_tail).toContain(marker('unlisted.test', page.port))
    const once = JSON.parse(
      (await call('run', { cmd, wait_seconds: 20, network_allow: ['unlisted.test'], justification: WHY }))
        .text,
    ) as Record<string, unknown>
    expect(once).toMatchObject({ status: 'done', exit_code: 0, stdout_tail: 'hello from the host\n' })
    expect(once).not.toHaveProperty('network_hint')
    expect(approval.asked).toMatchObject([
      { command: cmd, workdir: work, mode: 'workspace-write', network: ['unlisted.test'], background: true },
    ])
    expect(page.requests).toEqual(['GET /'])
  })

  it('codex: the marker shows, no hint and no network_allow (it cannot ask)', async () => {
    const page = await site()
    const { call, tools } = await compose(
      { profile: 'codex', sandbox: 'workspace-write', workdir: openDir('work') },
      { sandbox: 'bwrap', names: { 'unlisted.test': LOCAL } },
    )
    const schema = tools.get('exec_command')!.inputSchema as unknown as {
      properties: Record<string, unknown>
    }
    expect(Object.keys(schema.properties)).not.toContain('network_allow')
    const blocked = await call('exec_command', { cmd: `curl -sS -f http://unlisted.test:${page.port}/` })
    expect(blocked.text).toContain(marker('unlisted.test', page.port))
    expect(blocked.text).not.toContain('network_allow')
    expect(page.requests).toEqual([])
  })
})
