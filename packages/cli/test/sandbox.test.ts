/**
 * The sandbox test matrix (spec/sandbox.md) through the one path every process takes: the CLI's
 * composition root, `runtime.prepare` at load, `runtime.start` at each call. Tools are small sh
 * scripts declaring `runtime.sandbox`; their directories live under /var/tmp because `tmp: shared`
 * grants /tmp itself.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { createServer, type Server } from 'node:net'
import { join } from 'node:path'
import {
  createTestUser,
  eventually,
  markedProcesses,
  processesRunning,
  readableBy,
  type TestUser,
  udpSink,
  unreachableCheckout,
} from '@toolvisor/process-runtime/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bin } from './helpers.js'
import { dir, hasBwrap, isRoot, load, type Mechanism, mechanisms, sandboxedTool } from './sandbox-helpers.js'

/** Live processes of any run whose records are in `stateDir` (by the run's marker). */
function runProcesses(stateDir: string): number[] {
  const runs = join(stateDir, 'runs')
  return existsSync(runs) ? readdirSync(runs).flatMap((run) => markedProcesses(run)) : []
}

function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim()
  } catch {
    return ''
  }
}

const errno = {
  bwrap: { hiddenRead: 'No such file or directory', deniedWrite: 'Read-only file system' },
  landlock: { hiddenRead: 'Permission denied', deniedWrite: 'Permission denied' },
} satisfies Record<Mechanism, unknown>

describe.skipIf(!hasBwrap)('the sandbox matrix, through the runtime (bwrap: needs /usr/bin/bwrap)', () => {
  for (const mechanism of mechanisms) {
    describe(mechanism, () => {
      it('fs.read: the path is readable; a sibling is not; writing under it fails', async () => {
        const box = dir('tv-sb-box-')
        const data = dir('tv-sb-data-')
        const sibling = dir('tv-sb-sibling-')
        writeFileSync(join(data, 'f'), 'granted\n')
        writeFileSync(join(sibling, 'f'), 'secret\n')
        sandboxedTool(box, 'reader', { sandbox: { fs: { read: [data] } } })
        const { call } = await load(box, { sandbox: mechanism })
        expect(await call('reader', `cat ${data}/f`)).toEqual({ isError: false, text: 'granted\n' })
        const hidden = await call('reader', `cat ${sibling}/f`)
        expect(hidden.isError).toBe(true)
        expect(hidden.text).toContain(`${sibling}/f: ${errno[mechanism].hiddenRead}`)
        const write = await call('reader', `echo x > ${data}/new`)
        expect(write.text).toContain(errno[mechanism].deniedWrite)
        expect(existsSync(join(data, 'new'))).toBe(false)
      })

      it('fs.write: a written file appears on the host; a write outside fails and the host is unchanged', async () => {
        const box = dir('tv-sb-box-')
        const out = dir('tv-sb-out-', 0o777) // the sandbox user writes it
        const other = dir('tv-sb-other-')
        writeFileSync(join(other, 'keep'), 'original\n')
        sandboxedTool(box, 'writer', { sandbox: { fs: { write: [out] } } })
        const { call } = await load(box, { sandbox: mechanism })
        expect((await call('writer', `echo hello > ${out}/result && echo done`)).text).toBe('done\n')
        expect(readFileSync(join(out, 'result'), 'utf8')).toBe('hello\n')
        const outside = await call('writer', `echo changed > ${other}/keep`)
        expect(outside.isError).toBe(true)
        expect(readFileSync(join(other, 'keep'), 'utf8')).toBe('original\n')
        const usr = await call('writer', 'echo x > /usr/toolvisor-test-x')
        expect(usr.text).toContain(mechanism === 'bwrap' ? 'Read-only file system' : 'Permission denied')
        expect(existsSync('/usr/toolvisor-test-x')).toBe(false)
      })

      it("cancel reaches the tool's own TERM handler, and its exit code comes back", async () => {
        const box = dir('tv-sb-box-')
        sandboxedTool(box, 'patient', { sandbox: { fs: { read: [] } }, timeout: { stop: 5 } })
        const { call } = await load(box, { sandbox: mechanism })
        const controller = new AbortController()
        // A beat no other process runs (the script names it through a variable, so only the sleep
        // itself carries it): once it shows, the TERM trap is set.
        const length = `0.1${process.pid}${Date.now() % 100_000}`
        const script = `b=${length}; trap 'echo got-term; exit 42' TERM; echo started; while :; do sleep $b; done`
        const pending = call('patient', script, { signal: controller.signal })
        expect(await eventually(() => processesRunning(`sleep ${length}`).length > 0)).toBe(true)
        controller.abort()
        const result = await pending
        expect(result.isError).toBe(true)
        expect(result.text).toMatch(
          /^patient failed: cancelled \(exit code 42\)\n--- stdout ---\nstarted\ngot-term(\n--- stderr ---\nTerminated)?$/,
        )
      })

      it('leaves no sandboxed process when the runtime is SIGKILLed', async () => {
        const box = dir('tv-sb-box-')
        const tool = sandboxedTool(box, 'sleeper', { sandbox: { fs: { read: [] } } })
        const state = dir('tv-sb-state-')
        const host = spawn(
          process.execPath,
          [
            bin,
            'call',
            tool,
            JSON.stringify({ script: 'sleep 300 & sleep 300' }),
            '--sandbox',
            mechanism,
            '--state-dir',
            state,
          ],
          { stdio: 'ignore' },
        )
        // Every process of the run (bwrap, the launcher, the tool and what it starts) carries the
        // run's marker; the sandboxed tool inherits only the core environment.
        const deadline = Date.now() + 10_000
        const sleeps = () => runProcesses(state).filter((pid) => commandOf(pid) === 'sleep 300').length
        // Both sleeps of the sandboxed tool are up (describe, which runs first, has come and gone).
        while (sleeps() < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25))
        expect(sleeps()).toBe(2)
        host.kill('SIGKILL')
        const killedAt = Date.now()
        while (runProcesses(state).length > 0 && Date.now() - killedAt < 3000)
          await new Promise((r) => setTimeout(r, 20))
        expect(runProcesses(state)).toEqual([])
        expect(Date.now() - killedAt).toBeLessThan(1500)
      })

      it('a plain process (no describe document: a shell command) runs under it through the same launch path', async () => {
        const work = dir('tv-sb-work-', 0o777)
        const outside = dir('tv-sb-outside-')
        writeFileSync(join(outside, 'secret'), 'no\n')
        const { runtime } = await load(dir('tv-sb-empty-'), { sandbox: mechanism })
        const bash = await runtime.preparePlain({
          name: 'bash',
          file: '/bin/bash',
          sandbox: { fs: { write: [work] } },
        })
        expect(bash.sandbox?.mechanism.name).toBe(mechanism)
        const proc = runtime.start({
          tool: bash,
          argv: ['-c', `pwd; echo made > made; cat ${outside}/secret 2>/dev/null || echo denied; id -u`],
          cwd: work,
        })
        expect(await proc.exit).toMatchObject({ code: 0 })
        const [cwd, denied, uid] = proc.output.stdout().head.toString().trim().split('\n')
        expect([cwd, denied]).toEqual([work, 'denied'])
        if (isRoot) expect(uid).not.toBe('0')
        expect(readFileSync(join(work, 'made'), 'utf8')).toBe('made\n')
        // A working directory outside what the sandbox grants is refused, not quietly replaced.
        const refused = runtime.start({ tool: bash, argv: ['-c', 'pwd'], cwd: outside })
        expect(await refused.exit).toMatchObject({
          status: 'failed',
          why: `the working directory ${outside} lies outside what the sandbox grants; the process was not started`,
        })
      })

      describe.skipIf(!isRoot)('run_as (needs root to create a user and switch to it)', () => {
        let account: TestUser
        beforeAll(() => {
          account = createTestUser('tvsb')
        })
        afterAll(() => account.remove())

        it('runs as the user, files it writes are owned by it, and supplementary groups are kept', async () => {
          const box = dir('tv-sb-box-')
          const out = dir('tv-sb-out-')
          const shared = dir('tv-sb-group-')
          chmodSync(out, 0o777)
          const { user, group, uid } = account
          writeFileSync(join(shared, 'group-only'), 'for the group\n')
          execFileSync('chgrp', ['-R', group, shared])
          chmodSync(join(shared, 'group-only'), 0o640)
          // Landlock grants no /proc by default (it would expose every process): grant it to read the status.
          const read = mechanism === 'landlock' ? [shared, '/proc'] : [shared]
          sandboxedTool(box, 'other', { run_as: { user }, sandbox: { fs: { read, write: [out] } } })
          // The operator lets tools run as this user (decision 0092: none by default).
          const { call } = await load(box, { sandbox: mechanism, runAs: 'setpriv', runAsAllow: [user] })
          const result = await call(
            'other',
            `id -un; cat ${shared}/group-only; touch ${out}/mine; grep -E '^(CapEff|NoNewPrivs)' /proc/self/status`,
          )
          expect(result.text.startsWith(user), result.text).toBe(true)
          expect(result.isError).toBe(false)
          const [name, content, ...status] = result.text.trim().split('\n')
          expect(name).toBe(user)
          expect(content).toBe('for the group')
          expect(status).toEqual(
            expect.arrayContaining([
              expect.stringMatching(/^CapEff:\s+0+$/),
              expect.stringMatching(/^NoNewPrivs:\s+1$/),
            ]),
          )
          expect(statSync(join(out, 'mine')).uid).toBe(uid)
        })
      })
    })
  }

  describe.skipIf(!isRoot)('toolvisor itself running as an unprivileged user (root creates the user)', () => {
    let account: TestUser
    beforeAll(() => {
      account = createTestUser('tvun')
    })
    afterAll(() => account.remove())

    for (const mechanism of mechanisms) {
      it(`${mechanism}: fs.read holds with no privilege anywhere`, async (context) => {
        if (!readableBy(account.user, bin)) return context.skip(unreachableCheckout(account.user, bin))
        const box = dir('tv-sb-box-')
        const data = dir('tv-sb-data-')
        const sibling = dir('tv-sb-sibling-')
        const state = dir('tv-sb-state-')
        execFileSync('chown', [account.user, state])
        writeFileSync(join(data, 'f'), 'granted\n')
        writeFileSync(join(sibling, 'f'), 'secret\n')
        const tool = sandboxedTool(box, 'reader', { sandbox: { fs: { read: [data] } } })
        const cli = (script: string) =>
          spawnSync(
            'setpriv',
            [
              '--reuid',
              account.user,
              '--regid',
              account.user,
              '--init-groups',
              process.execPath,
              bin,
              'call',
              tool,
              JSON.stringify({ script }),
              '--sandbox',
              mechanism,
              '--state-dir',
              state,
            ],
            { encoding: 'utf8' },
          )
        const whoami = cli(`id -u; cat ${data}/f`)
        expect(whoami.stdout).toBe(`${account.uid}\ngranted\n`)
        expect(whoami.status).toBe(0)
        const hidden = cli(`cat ${sibling}/f`)
        expect(hidden.status).toBe(1)
        expect(hidden.stdout).toContain(`${sibling}/f: ${errno[mechanism].hiddenRead}`)
      })
    }
  })

  describe('bwrap only', () => {
    it('root caller: no capabilities inside, and a remount of a read-only bind fails', async () => {
      const box = dir('tv-sb-box-')
      const data = dir('tv-sb-data-')
      writeFileSync(join(data, 'f'), 'host\n')
      sandboxedTool(box, 'rooty', { sandbox: { fs: { read: [data] } } })
      const { call } = await load(box, { sandbox: 'bwrap' })
      const result = await call(
        'rooty',
        `grep CapEff /proc/self/status; mount -o remount,bind,rw ${data} 2>&1; echo changed > ${data}/f 2>&1; true`,
      )
      expect(result.text).toMatch(/^CapEff:\s+0+\n/)
      expect(readFileSync(join(data, 'f'), 'utf8')).toBe('host\n')
    })

    it('net: none cannot reach a host loopback listener over TCP or UDP; only lo exists', async () => {
      const box = dir('tv-sb-box-')
      sandboxedTool(box, 'offline', { sandbox: { net: 'none' } })
      const server: Server = createServer((socket) => socket.end('hello\n'))
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      const port = (server.address() as { port: number }).port
      const udp = await udpSink()
      const udpPort = udp.port
      try {
        const { call } = await load(box, { sandbox: 'bwrap' })
        const py = (code: string) => `/usr/bin/python3 -c '${code}' 2>&1 || true`
        const tcp = await call(
          'offline',
          py(`import socket; socket.create_connection(("127.0.0.1", ${port}), 2)`),
        )
        expect(tcp.text).toMatch(
          /PermissionError: \[Errno 1\] Operation not permitted|ConnectionRefusedError/,
        )
        const dgram = await call(
          'offline',
          py(
            `import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b"x", ("127.0.0.1", ${udpPort}))`,
          ),
        )
        expect(dgram.text).toMatch(/Error/)
        const devices = await call('offline', "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '")
        expect(devices.text).toBe('lo\n')
        expect(await udp.drain()).toEqual([])
      } finally {
        server.close()
        await udp.close()
      }
    })

    it('tmp: private hides a host /tmp marker, and what the tool writes in /tmp stays off the host', async () => {
      const box = dir('tv-sb-box-')
      const marker = `/tmp/tv-marker-${randomUUID()}`
      writeFileSync(marker, 'host\n')
      try {
        sandboxedTool(box, 'private', { sandbox: { tmp: 'private' } })
        const { call } = await load(box, { sandbox: 'bwrap' })
        const name = `tv-inside-${randomUUID()}`
        const result = await call('private', `ls ${marker} 2>&1; echo x > /tmp/${name} && echo wrote`)
        expect(result.text).toBe(`ls: cannot access '${marker}': No such file or directory\nwrote\n`)
        expect(existsSync(`/tmp/${name}`)).toBe(false)
      } finally {
        rmSync(marker, { force: true })
      }
    })
  })

  describe('refusals and auto', () => {
    it('--sandbox landlock refuses tmp: private naming the field, honours net: none; the other tools load', async () => {
      const box = dir('tv-sb-box-')
      sandboxedTool(box, 'needs_private_tmp', { sandbox: { tmp: 'private' } })
      sandboxedTool(box, 'needs_no_net', { sandbox: { net: 'none' } })
      sandboxedTool(box, 'plain', { sandbox: { fs: { read: [] } } })
      const { tools, call } = await load(box, { sandbox: 'landlock' })
      expect(tools.list().map((t) => t.name)).toEqual(['needs_no_net', 'plain', 'processes'])
      const reports = tools.loadErrors().map((r) => [r.field, r.message.replace(`${box}/`, '')])
      expect(reports).toEqual([
        [
          '$.runtime.sandbox.tmp',
          'needs_private_tmp: $.runtime.sandbox.tmp: landlock cannot honour it: a private /tmp needs a mount namespace, ' +
            'which Landlock does not have (fix: use --sandbox bwrap (or --sandbox auto, which picks it for this tool), or declare tmp: shared)',
        ],
      ])
      const offline = await call(
        'needs_no_net',
        `/usr/bin/python3 -c 'import socket; socket.socket()' 2>&1 | tail -n 1`,
      )
      expect(offline.text).toBe('PermissionError: [Errno 1] Operation not permitted\n')
    })

    it('auto runs a tool that needs tmp: private under bwrap, and plain ones under bwrap too', async () => {
      const box = dir('tv-sb-box-')
      sandboxedTool(box, 'private', { sandbox: { tmp: 'private' } })
      const { binary, call } = await load(box, { sandbox: 'auto' })
      const loaded = await binary.load(join(box, 'private'))
      expect(loaded.prepared.sandbox?.mechanism.name).toBe('bwrap')
      expect((await call('private', 'echo inside')).text).toBe('inside\n')
    })

    it('with bwrap unavailable, auto refuses the tool that needs it and still loads the others under landlock', async () => {
      const box = dir('tv-sb-box-')
      sandboxedTool(box, 'private', { sandbox: { tmp: 'private' } })
      sandboxedTool(box, 'plain', { sandbox: { fs: { read: [] } } })
      const { tools, binary } = await load(box, { sandbox: 'auto', bwrap: '/nonexistent/bwrap' })
      expect(tools.list().map((t) => t.name)).toEqual(['plain', 'processes'])
      expect((await binary.load(join(box, 'plain'))).prepared.sandbox?.mechanism.name).toBe('landlock')
      const [report] = tools.loadErrors()
      expect(report!.message).toMatch(
        /private: \$\.runtime\.sandbox: no mechanism honours every declared field \(auto\): bwrap: mechanism: .*; landlock: tmp: a private \/tmp needs a mount namespace, which Landlock does not have$/,
      )
    })

    it('runs a symlinked tool from its real directory: relative grants and the working directory are there', async () => {
      const real = dir('tv-sb-real-')
      const box = dir('tv-sb-box-')
      mkdirSync(join(real, 'data'))
      writeFileSync(join(real, 'data', 'f'), 'next to the real file\n')
      chmodSync(join(real, 'data'), 0o755)
      const { symlinkSync } = await import('node:fs')
      symlinkSync(sandboxedTool(real, 'linked', { sandbox: { fs: { read: ['data'] } } }), join(box, 'linked'))
      const { tools, call } = await load(box, { sandbox: 'bwrap' })
      expect(tools.loadErrors()).toEqual([])
      expect(await call('linked', 'pwd; cat data/f')).toEqual({
        isError: false,
        text: `${real}\nnext to the real file\n`,
      })
    })

    it('refuses a declared path that does not exist, and a relative symlink that leads outside the tool', async () => {
      const box = dir('tv-sb-box-')
      const { symlinkSync } = await import('node:fs')
      symlinkSync('/etc', join(box, 'state'))
      sandboxedTool(box, 'missing', { sandbox: { fs: { read: ['/no/such/dir'] } } })
      sandboxedTool(box, 'escapes', { sandbox: { fs: { write: ['state'] } } })
      const { tools } = await load(box, { sandbox: 'bwrap' })
      expect(
        tools
          .loadErrors()
          .map((r) => r.field)
          .sort(),
      ).toEqual(['$.runtime.sandbox.fs.read[0]', '$.runtime.sandbox.fs.write[0]'])
    })
  })

  describe('toolvisor check --probe reports the mechanism each tool resolved to', () => {
    it('names the mechanism (auto) and what it cannot enforce; a field the mechanism refuses is skipped', async () => {
      const box = dir('tv-sb-box-')
      sandboxedTool(box, 'private', { sandbox: { tmp: 'private' } })
      sandboxedTool(box, 'plain', { sandbox: { fs: { read: [] } } })
      const probe = (sandbox: string) =>
        spawnSync(
          process.execPath,
          [
            bin,
            'check',
            '--toolbox',
            box,
            '--sandbox',
            sandbox,
            '--probe',
            '--json',
            '--state-dir',
            dir('tv-sb-state-'),
          ],
          {
            encoding: 'utf8',
          },
        )
      const auto = probe('auto')
      expect(auto.status).toBe(0)
      const tools = JSON.parse(auto.stdout).tools
      expect(tools).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            tool: 'private',
            status: 'ok',
            mechanism: 'bwrap',
            gaps: expect.arrayContaining([expect.stringMatching(/unix socket/)]),
          }),
          expect.objectContaining({ tool: 'plain', status: 'ok', mechanism: 'bwrap' }),
        ]),
      )
      const landlock = JSON.parse(probe('landlock').stdout).tools
      expect(landlock).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            tool: 'private',
            status: 'skipped',
            detail: expect.stringMatching(/\$\.runtime\.sandbox\.tmp: landlock cannot honour it/),
          }),
          expect.objectContaining({
            tool: 'plain',
            status: 'ok',
            mechanism: 'landlock',
            gaps: expect.arrayContaining([expect.stringMatching(/stat/)]),
          }),
        ]),
      )
    })
  })

  describe('check runs under the sandbox', () => {
    it('a check that reads outside its fs.read fails under bwrap', async () => {
      const box = dir('tv-sb-box-')
      const secret = dir('tv-sb-secret-')
      writeFileSync(join(secret, 'key'), 'k\n')
      const tool = sandboxedTool(
        box,
        'probe',
        { sandbox: { fs: { read: [] } } },
        `cat ${secret}/key >/dev/null && echo '{"ok": true}'`,
      )
      const state = dir('tv-sb-state-')
      mkdirSync(join(state, 'x'))
      const { runCheck } = await import('@toolvisor/capability-backends')
      const { binary } = await load(box, { sandbox: 'bwrap' })
      const result = await runCheck(binary, await binary.load(tool))
      expect(result.status).toBe('failed')
      expect(result.detail).toContain(`${secret}/key: No such file or directory`)
      // Unsandboxed, the same check passes: the failure is the sandbox's doing.
      const open = await load(dir('tv-sb-open-'), {})
      const plain = sandboxedTool(
        dir('tv-sb-plainbox-'),
        'probe',
        {},
        `cat ${secret}/key >/dev/null && echo '{"ok": true}'`,
      )
      expect((await runCheck(open.binary, await open.binary.load(plain))).status).toBe('ok')
    })
  })
})
