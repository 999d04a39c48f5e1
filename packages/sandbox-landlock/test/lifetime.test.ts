/**
 * F5 of the 2026-12-01 review at the mechanism's own level: what a Landlock tool starts ends when
 * the tool ends, or when the launcher is killed, whatever it shed (the run's marker, its process
 * group, its session), with the report's life.sh. Under a pid namespace where the launcher can
 * make one (this host), and under the child subreaper where it cannot: a seccomp filter refusing
 * unshare(2), as a container's profile does. No group kill and no sweep here: the runtime does
 * those, and they are what the strays escape.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { chmodSync, copyFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { builtLauncher } from '../src/internal/launcher.js'
import { execMinimum } from '../src/internal/policy.js'
import { landlockMechanism } from '../src/mechanism.js'
import {
  createTestUser,
  eventually,
  exitOf,
  FILTER_ARGS,
  filterStdio,
  hasPython,
  isRoot,
  killSleeps,
  killStarted,
  launchOf,
  lifeTag,
  lifeTool,
  policyFor,
  processesRunning,
  removeTempDirs,
  run,
  sleepsAlive,
  start,
  type TestUser,
  tempDir,
  unshareRefused,
  writeTool,
} from './helpers.js'

afterEach(async () => {
  killSleeps()
  await killStarted()
})
afterAll(() => removeTempDirs())

const ALL = [1, 2, 3, 4, 5, 6, 7]
const kernelAbi = Number(execFileSync(builtLauncher, ['--abi'], { encoding: 'utf8' }))

const modes = [
  ['under its pid namespace', () => landlockMechanism()],
  [
    'under the subreaper (unshare refused by a seccomp filter)',
    () => landlockMechanism({ launcher: unshareRefused(builtLauncher) }),
  ],
] as const

/** Starts life.sh under `mechanism` and waits until its seven sleeps run. */
async function lifeUnder(mechanism: ReturnType<typeof landlockMechanism>, extra: string[] = []) {
  const tool = lifeTool()
  const policy = policyFor(tool.dir, tool.file)
  expect(await mechanism.qualify(policy, undefined)).toEqual({ ok: true })
  const tag = lifeTag()
  const go = join(tool.dir, 'go')
  const child = start(mechanism.wrap(launchOf(tool.file, [tag, go, ...extra]), policy, undefined))
  const exit = exitOf(child)
  const up = await eventually(() => sleepsAlive(tag).length === 7 || child.exitCode !== null, 15_000)
  expect(up && sleepsAlive(tag), 'the seven sleeps of life.sh run').toEqual(ALL)
  return { child, exit, tag, go }
}

describe.skipIf(!hasPython)('F5: a Landlock tool leaves nothing behind (needs /usr/bin/python3)', () => {
  for (const [mode, mechanismOf] of modes) {
    describe(mode, () => {
      it('when the tool ends, every process it started ends with it', async () => {
        const { exit, tag, go } = await lifeUnder(mechanismOf())
        writeFileSync(go, '')
        expect(await exit).toEqual({ code: 0, signal: null })
        await eventually(() => sleepsAlive(tag).length === 0, 2_000)
        expect(sleepsAlive(tag), 'sleeps alive after the tool ended').toEqual([])
      })

      it('SIGKILL of the launcher alone (the process the runtime knows) kills them all', async () => {
        const { child, exit, tag } = await lifeUnder(mechanismOf())
        process.kill(child.pid!, 'SIGKILL')
        expect(await exit).toEqual({ code: null, signal: 'SIGKILL' })
        await eventually(() => sleepsAlive(tag).length === 0, 2_000)
        expect(sleepsAlive(tag), 'sleeps alive after the launcher was killed').toEqual([])
      })

      it('a stray that keeps starting new strays (each leaving group and marker) is gone with the tool', async () => {
        const mechanism = mechanismOf()
        const dir = lifeTool().dir
        const tag = lifeTag()
        const go = join(dir, 'go')
        const tool = writeTool(
          join(dir, 'breed.sh'),
          `#!/bin/bash\nsetsid env -i /bin/bash -c 'while :; do setsid env -i /usr/bin/sleep ${tag}1 & sleep 0.02; done' &\n` +
            `while [ ! -e ${go} ]; do sleep 0.05; done\n`,
        )
        const policy = policyFor(dir, tool)
        expect(await mechanism.qualify(policy, undefined)).toEqual({ ok: true })
        const child = start(mechanism.wrap(launchOf(tool), policy, undefined))
        const exit = exitOf(child)
        expect(await eventually(() => sleepsAlive(tag).length >= 5, 15_000)).toBe(true)
        writeFileSync(go, '')
        expect(await exit).toEqual({ code: 0, signal: null })
        await eventually(() => sleepsAlive(tag).length === 0, 2_000)
        expect(sleepsAlive(tag), 'strays alive after the tool ended').toEqual([])
        expect(processesRunning(`${tag}1 & sleep 0.02`), 'the breeder alive after the tool ended').toEqual([])
      })

      it("SIGKILL of the group (a tool ignoring TERM, killed after the runtime's stop timeout) kills them all", async () => {
        const { child, exit, tag } = await lifeUnder(mechanismOf(), ['term'])
        process.kill(-child.pid!, 'SIGTERM')
        process.kill(-child.pid!, 'SIGKILL')
        expect(await exit).toEqual({ code: null, signal: 'SIGKILL' })
        await eventually(() => sleepsAlive(tag).length === 0, 2_000)
        expect(sleepsAlive(tag), 'sleeps alive after the group was killed').toEqual([])
      })
    })
  }
})

describe.skipIf(!hasPython || !isRoot)(
  'F5 as an ordinary user under the subreaper (needs root to make the user)',
  () => {
    let user: TestUser | undefined
    beforeAll(() => {
      user = createTestUser('tvlf')
    })
    afterAll(() => user?.remove())

    it('what the tool started dies when it ends, the launcher run as that user with unshare refused', async () => {
      const u = user!
      const launcher = join(tempDir(), 'landlock-launcher')
      copyFileSync(builtLauncher, launcher)
      chmodSync(launcher, 0o755)
      const wrapper = unshareRefused(launcher)
      const tool = lifeTool()
      const tag = lifeTag()
      const go = join(tempDir(), 'go')
      const minimum = execMinimum()
      const args = [
        ...FILTER_ARGS,
        ...minimum.read.flatMap((path) => ['--ro', path]),
        ...minimum.write.flatMap((path) => ['--rw', path]),
        '--ro',
        tool.dir,
        '--ro',
        join(go, '..'),
        '--',
        tool.file,
        tag,
        go,
      ]
      const child = spawn(wrapper, args, {
        uid: u.uid,
        gid: u.gid,
        cwd: '/',
        detached: true,
        stdio: filterStdio('ignore'),
      })
      try {
        const exit = exitOf(child)
        const up = await eventually(() => sleepsAlive(tag).length === 7 || child.exitCode !== null, 15_000)
        expect(up && sleepsAlive(tag), 'the seven sleeps of life.sh run').toEqual(ALL)
        writeFileSync(go, '')
        expect(await exit).toEqual({ code: 0, signal: null })
        await eventually(() => sleepsAlive(tag).length === 0, 2_000)
        expect(sleepsAlive(tag), 'sleeps alive after the tool ended').toEqual([])
      } finally {
        if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL')
      }
    })
  },
)

describe.skipIf(!hasPython || !isRoot)(
  'the subreaper against its own tool (needs root to make the user)',
  () => {
    let user: TestUser | undefined
    beforeAll(() => {
      user = createTestUser('tvlk')
    })
    afterAll(() => user?.remove())

    /**
     * free.sh as the user under the subreaper: a stray that shed everything (and holds no pipe of the
     * test's, which a survivor would keep open), then a SIGKILL of its parent.
     */
    function freeing(first: string[] = []) {
      const u = user!
      const launcher = join(tempDir(), 'landlock-launcher')
      copyFileSync(builtLauncher, launcher)
      chmodSync(launcher, 0o755)
      const tag = lifeTag()
      const dir = tempDir()
      const tool = writeTool(
        join(dir, 'free.sh'),
        `#!/bin/sh\nsetsid env -i /usr/bin/sleep ${tag}4 >/dev/null 2>&1 &\nkill -KILL $PPID 2>/dev/null && echo killed || echo refused\n`,
      )
      const minimum = execMinimum()
      const args = [
        ...first,
        ...FILTER_ARGS,
        ...minimum.read.flatMap((path) => ['--ro', path]),
        ...minimum.write.flatMap((path) => ['--rw', path]),
        '--ro',
        dir,
        '--',
        tool,
      ]
      const result = spawnSync(unshareRefused(launcher), args, {
        uid: u.uid,
        gid: u.gid,
        cwd: '/',
        encoding: 'utf8',
        stdio: filterStdio(),
      })
      return { tag, stdout: result.stdout, signal: result.signal }
    }

    it.skipIf(kernelAbi < 6)(
      'a tool of the same user cannot SIGKILL the subreaper to free what it left (Landlock signal scoping, ABI >= 6)',
      async () => {
        const { tag, stdout } = freeing()
        expect(stdout).toBe('refused\n')
        await eventually(() => sleepsAlive(tag).length === 0, 2_000)
        expect(sleepsAlive(tag)).toEqual([])
      },
    )

    it('below ABI 6 (--max-abi 5) it can, and what it left lives on: the gap describe() and the README state', async () => {
      const { tag, signal } = freeing(['--max-abi', '5'])
      // The subreaper was killed (the stand-in ends as it did), and the tool with it (its
      // PDEATHSIG, maybe before it could say so): what it left outside lives on.
      expect(signal).toBe('SIGKILL')
      expect(await eventually(() => sleepsAlive(tag).length === 1, 2_000)).toBe(true)
    })
  },
)

describe('/proc under the pid namespace', () => {
  it("a tool that reads /proc sees only its own processes, not the host's", async () => {
    const mechanism = landlockMechanism()
    const dir = lifeTool().dir
    const tool = writeTool(join(dir, 'ps.sh'), "#!/bin/sh\nls /proc | grep -E '^[0-9]+$' | sort -n\n")
    const policy = policyFor(dir, tool, { read: ['/proc'], declared: ['fs.read'] })
    expect(await mechanism.qualify(policy, undefined)).toEqual({ ok: true })
    const result = await run(mechanism.wrap(launchOf(tool), policy, undefined))
    expect(result.stderr).toBe('')
    const pids = result.stdout.trim().split('\n').map(Number)
    expect(pids).not.toContain(process.pid)
    // The launcher as the namespace's pid 1, the tool (sh), ls, grep and sort: nothing else.
    expect(pids.length, `pids seen: ${pids.join(' ')}`).toBeLessThanOrEqual(5)
    expect(pids[0]).toBe(1)
  })
})

describe('describe() says which applies here, and it is what runs', () => {
  it('here: the pid namespace, asked for in every launch (--pid-ns)', async () => {
    const mechanism = landlockMechanism()
    expect((await mechanism.describe()).gaps).toContain(
      "pid namespace: strays die with the tool; /proc shows only the tool's processes",
    )
    const tool = lifeTool()
    const policy = policyFor(tool.dir, tool.file)
    expect(await mechanism.qualify(policy, undefined)).toEqual({ ok: true })
    expect(mechanism.wrap(launchOf(tool.file), policy, undefined).args).toContain('--pid-ns')
  })

  it.skipIf(!hasPython)(
    'with unshare refused: the subreaper, why, and /proc showing the host (a tool that reads it sees this test)',
    async () => {
      const mechanism = landlockMechanism({ launcher: unshareRefused(builtLauncher) })
      const namespaces = `${process.geteuid?.() === 0 ? '' : 'CLONE_NEWUSER|'}CLONE_NEWNS|CLONE_NEWPID|CLONE_NEWIPC`
      expect((await mechanism.describe()).gaps).toContain(
        `no pid namespace here (unshare(${namespaces}): Operation not permitted): a child subreaper kills ` +
          'what the tool left when it ends; /proc shows every process of the host',
      )
      const dir = lifeTool().dir
      const tool = writeTool(join(dir, 'ps.sh'), `#!/bin/sh\ntest -d /proc/${process.pid} && echo seen\n`)
      const policy = policyFor(dir, tool, { read: ['/proc'], declared: ['fs.read'] })
      expect(await mechanism.qualify(policy, undefined)).toEqual({ ok: true })
      const launch = mechanism.wrap(launchOf(tool), policy, undefined)
      expect(launch.args).not.toContain('--pid-ns')
      expect((await run(launch)).stdout).toBe('seen\n')
    },
  )
})
