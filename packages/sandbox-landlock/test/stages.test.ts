/**
 * The launcher's three processes (P stands in for the tool, Q reaps, T is the tool), under its pid
 * namespace (--pid-ns) and under the subreaper: what the runtime sees is the tool's own exit code
 * or signal, `--features` says which applies here, and --pid-ns fails closed where it cannot be
 * made. The fresh /proc: only the run's processes, still behind the Landlock rules (a rule on the
 * host's /proc is made again on it; / covers it). As root and as an ordinary user (a user
 * namespace mapping only that user).
 */
import { execFileSync, spawnSync } from 'node:child_process'
import {
  chmodSync,
  copyFileSync,
  existsSync,
  readdirSync,
  readlinkSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { builtLauncher } from '../src/internal/launcher.js'
import { execMinimum } from '../src/internal/policy.js'
import {
  createTestUser,
  exitOf,
  FILTER_ARGS,
  filterFd,
  filterStdio,
  hasPython,
  isRoot,
  killStarted,
  node,
  nodeOutsideUsr,
  removeTempDirs,
  run,
  start,
  type TestUser,
  tempDir,
  unshareRefused,
  waitForOutput,
  writeTool,
} from './helpers.js'

const abi = Number(execFileSync(builtLauncher, ['--abi'], { encoding: 'utf8' }).trim())
const minimum = execMinimum()
const base = [
  ...FILTER_ARGS,
  ...minimum.read.flatMap((p) => ['--ro', p]),
  ...minimum.write.flatMap((p) => ['--rw', p]),
  ...(nodeOutsideUsr ? ['--ro', node] : []),
]
const needsRoot = 'needs root to make the user'
let user: TestUser | undefined
/** The launcher copied where the test user can run it (the checkout may be out of its reach). */
let userLauncher = ''

beforeAll(() => {
  if (!isRoot) return
  user = createTestUser('tvst')
  userLauncher = join(tempDir(), 'landlock-launcher')
  copyFileSync(builtLauncher, userLauncher)
  chmodSync(userLauncher, 0o755)
})
afterEach(async () => {
  await killStarted()
})
afterAll(() => {
  if (user !== undefined) user.remove()
  removeTempDirs()
})

function launch(args: string[], launcher = builtLauncher) {
  return run({ file: launcher, args, env: { PATH: '/usr/bin:/bin' }, cwd: '/', extraFds: [filterFd] })
}

/** `sh -c SCRIPT` as the test user through the user's copy of the launcher. */
function asUser(args: string[], script: string) {
  const u = user!
  return spawnSync(userLauncher, [...base, ...args, '--', '/bin/sh', '-c', script], {
    encoding: 'utf8',
    uid: u.uid,
    gid: u.gid,
    cwd: '/',
    env: { PATH: '/usr/bin:/bin' },
    stdio: filterStdio(),
  })
}

const modes = [
  ['--pid-ns', ['--pid-ns']],
  ['the subreaper', []],
] as const

describe('--features', () => {
  it('says the ABI and that a pid namespace can be made here (by making one)', () => {
    expect(spawnSync(builtLauncher, ['--features'], { encoding: 'utf8' })).toMatchObject({
      status: 0,
      stdout: `abi ${abi}\npid-ns yes\n`,
      stderr: '',
    })
    expect(spawnSync(builtLauncher, ['--max-abi', '5', '--features'], { encoding: 'utf8' }).stdout).toBe(
      'abi 5\npid-ns yes\n',
    )
  })

  it.skipIf(!hasPython)(
    'where unshare is refused (a seccomp filter, as in a container): pid-ns no, and why',
    () => {
      const wrapper = unshareRefused(builtLauncher)
      const namespaces = `${isRoot ? '' : 'CLONE_NEWUSER|'}CLONE_NEWNS|CLONE_NEWPID|CLONE_NEWIPC`
      expect(spawnSync(wrapper, ['--features'], { encoding: 'utf8' })).toMatchObject({
        status: 0,
        stdout: `abi ${abi}\npid-ns no: unshare(${namespaces}): Operation not permitted\n`,
      })
    },
  )

  it.skipIf(!isRoot)(`as an ordinary user: in a user namespace of its own (${needsRoot})`, () => {
    const u = user!
    expect(spawnSync(userLauncher, ['--features'], { encoding: 'utf8', uid: u.uid, gid: u.gid }).stdout).toBe(
      `abi ${abi}\npid-ns yes\n`,
    )
  })
})

describe('--pid-ns fails closed', () => {
  it.skipIf(!hasPython)(
    'where the namespace cannot be made: 125, one line, the command not run',
    async () => {
      const marker = join(tempDir(), 'ran')
      const result = await launch(
        [...base, '--rw', join(marker, '..'), '--pid-ns', '--', '/bin/sh', '-c', `echo > ${marker}`],
        unshareRefused(builtLauncher),
      )
      const namespaces = `${isRoot ? '' : 'CLONE_NEWUSER|'}CLONE_NEWNS|CLONE_NEWPID|CLONE_NEWIPC`
      expect(result).toEqual({
        code: 125,
        signal: null,
        stdout: '',
        stderr: `toolvisor-landlock: --pid-ns: unshare(${namespaces}): Operation not permitted\n`,
      })
      expect(existsSync(marker)).toBe(false)
    },
  )
})

describe('what the runtime sees is the tool itself', () => {
  for (const [mode, flags] of modes) {
    describe(mode, () => {
      it('its exit code, and its exec failures (127 not found, 126 not allowed)', async () => {
        const dir = tempDir()
        const denied = writeTool(join(dir, 't.sh'), '#!/bin/sh\necho no\n')
        expect(
          await launch([...base, ...flags, '--', '/bin/sh', '-c', 'echo out; echo err >&2; exit 3']),
        ).toEqual({
          code: 3,
          signal: null,
          stdout: 'out\n',
          stderr: 'err\n',
        })
        expect(await launch([...base, ...flags, '--', join(dir, 'missing')])).toMatchObject({
          code: 127,
          stderr: `toolvisor-landlock: exec ${join(dir, 'missing')}: No such file or directory\n`,
        })
        expect(await launch([...base, ...flags, '--', denied])).toMatchObject({
          code: 126,
          stderr: `toolvisor-landlock: exec ${denied}: Permission denied\n`,
        })
      })

      it.each(['TERM', 'KILL', 'SEGV', 'USR1'])(
        'the signal that ended it (SIG%s), re-raised by the stand-in, which dumps no core of its own',
        async (name) => {
          const standIn = tempDir()
          const tool = tempDir()
          chmodSync(tool, 0o777)
          // Cores allowed: a core the stand-in dumped would land in its own directory (core_pattern
          // permitting); the tool's is the tool's (it dies in another one).
          const result = await run({
            file: '/bin/sh',
            args: [
              '-c',
              `ulimit -c unlimited 2>/dev/null; exec "${builtLauncher}" "$@"`,
              'sh',
              ...base,
              '--rw',
              tool,
              ...flags,
              '--',
              '/bin/sh',
              '-c',
              `cd ${tool}; kill -${name} $$`,
            ],
            env: { PATH: '/usr/bin:/bin' },
            cwd: standIn,
            extraFds: [filterFd],
          })
          expect({ code: result.code, signal: result.signal }).toEqual({ code: null, signal: `SIG${name}` })
          expect(readdirSync(standIn)).toEqual([])
        },
      )

      it('the stand-in and the reaper hold none of its pipes: a tool that closes its stdout ends the stream while it runs', async () => {
        const dir = tempDir()
        const go = join(dir, 'go')
        const child = start({
          file: builtLauncher,
          args: [
            ...base,
            '--ro',
            dir,
            ...flags,
            '--',
            '/bin/sh',
            '-c',
            `echo out; exec >&-; while [ ! -e ${go} ]; do sleep 0.02; done`,
          ],
          env: { PATH: '/usr/bin:/bin' },
          cwd: '/',
          extraFds: [filterFd],
        })
        const exit = exitOf(child)
        let out = ''
        child.stdout!.on('data', (d: Buffer) => (out += d))
        await new Promise((resolve) => child.stdout!.once('end', resolve))
        expect(out).toBe('out\n')
        expect(child.exitCode).toBeNull()
        writeFileSync(go, '')
        expect(await exit).toEqual({ code: 0, signal: null })
      })

      it('a signal to the group reaches the tool once: its handler runs, the stand-in lives on', async () => {
        const child = start({
          file: builtLauncher,
          args: [
            ...base,
            ...flags,
            '--',
            '/bin/sh',
            '-c',
            'n=0; trap \'n=$((n+1)); echo "usr1 $n"\' USR1; trap \'echo "term after $n"; exit 42\' TERM; echo ready; while :; do sleep 0.05; done',
          ],
          env: { PATH: '/usr/bin:/bin' },
          cwd: '/',
          extraFds: [filterFd],
        })
        let out = ''
        child.stdout!.on('data', (d: Buffer) => (out += d))
        const exit = exitOf(child)
        await waitForOutput(child, 'ready')
        process.kill(-child.pid!, 'SIGUSR1')
        await waitForOutput(child, 'usr1 1')
        process.kill(-child.pid!, 'SIGTERM')
        expect(await exit).toEqual({ code: 42, signal: null })
        expect(out).toBe('ready\nusr1 1\nterm after 1\n')
      })
    })
  }
})

describe('inside the pid namespace', () => {
  it('/proc is a fresh one: the run only, with the launcher as pid 1 and the tool as pid 2', async () => {
    const result = await launch([
      ...base,
      '--ro',
      '/proc',
      '--pid-ns',
      '--',
      '/bin/sh',
      '-c',
      'echo $$; ls /proc | grep -E "^[0-9]+$" | sort -n | tr "\\n" " "; echo; head -c 17 /proc/1/cmdline',
    ])
    expect(result.stderr).toBe('')
    const [own, pids, first] = result.stdout.split('\n')
    expect(own).toBe('2')
    expect(pids?.trim().split(' ').map(Number).slice(0, 2)).toEqual([1, 2])
    expect(pids?.trim().split(' ').length).toBeLessThanOrEqual(6)
    expect(first).toBe(builtLauncher.slice(0, 17))
  })

  it('Landlock still covers it: nothing without a grant; a rule on the host /proc (path or descriptor), or on /, is one on it', async () => {
    const script = (path: string) => `cat ${path} >/dev/null 2>&1 && echo read || echo denied`
    const read = async (grant: string[], path: string) =>
      (await launch([...base, ...grant, '--pid-ns', '--', '/bin/sh', '-c', script(path)])).stdout.trim()
    expect(await read([], '/proc/self/status')).toBe('denied')
    expect(await read(['--ro', '/proc'], '/proc/self/status')).toBe('read')
    expect(await read(['--ro', '/'], '/proc/self/status')).toBe('read')
    expect(await read(['--ro', '/proc/cpuinfo'], '/proc/cpuinfo')).toBe('read')
    expect(await read(['--ro', '/proc/cpuinfo'], '/proc/self/status')).toBe('denied')
    // A descriptor of the host's /proc, as the runtime passes a declared grant (--ro-fd).
    const withFd = await run({
      file: '/bin/sh',
      args: [
        '-c',
        `exec 7</proc; exec "${builtLauncher}" "$@"`,
        'sh',
        ...base,
        '--ro-fd',
        '7',
        '--pid-ns',
        '--',
        '/bin/sh',
        '-c',
        script('/proc/self/status'),
      ],
      env: { PATH: '/usr/bin:/bin' },
      cwd: '/',
      extraFds: [filterFd],
    })
    expect(withFd.stdout.trim()).toBe('read')
  })

  it('a read rule on /proc stays read-only on the fresh one: no write to /proc/self/comm or /proc/sys, even as uid 0', async () => {
    const result = await launch([
      ...base,
      '--ro',
      '/proc',
      '--pid-ns',
      '--',
      '/bin/sh',
      '-c',
      'id -u; echo x > /proc/self/comm 2>/dev/null && echo comm written; echo 1 > /proc/sys/kernel/sysrq 2>/dev/null && echo sysrq written; echo end',
    ])
    expect(result.stdout).toBe(`${process.getuid?.()}\nend\n`)
  })

  it("SysV IPC and POSIX queues are the run's own: a new IPC namespace", async () => {
    const result = await launch([...base, '--pid-ns', '--', '/usr/bin/readlink', '/proc/self/ns/ipc'])
    expect(result.stderr).toBe('')
    expect(result.stdout.trim()).toMatch(/^ipc:\[\d+\]$/)
    expect(result.stdout.trim()).not.toBe(readlinkSync('/proc/self/ns/ipc'))
  })

  it.skipIf(!isRoot)(
    `as an ordinary user: the user's own ids (mapped to themselves), no capability, its files its own (${needsRoot})`,
    () => {
      const u = user!
      const out = tempDir()
      chmodSync(out, 0o777)
      const result = asUser(
        ['--ro', '/proc', '--rw', out, '--pid-ns'],
        `id -u; id -g; grep -E "^(CapEff|CapBnd|CapPrm|NoNewPrivs)" /proc/self/status; cat /proc/self/uid_map; echo $$; touch ${out}/f`,
      )
      expect(result.stderr).toBe('')
      expect(result.status).toBe(0)
      const map = `${String(u.uid).padStart(10)}${String(u.uid).padStart(11)}${String(1).padStart(11)}`
      expect(result.stdout).toBe(
        `${u.uid}\n${u.gid}\nCapPrm:\t0000000000000000\nCapEff:\t0000000000000000\nCapBnd:\t0000000000000000\nNoNewPrivs:\t1\n${map}\n2\n`,
      )
      expect(statSync(join(out, 'f')).uid).toBe(u.uid)
    },
  )
})
