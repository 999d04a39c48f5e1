/**
 * One stuck launch holds nobody (issue 26, point 4): the fork server serves every launch of every
 * session, so a child that hangs before its exec (a working directory on a filesystem that does
 * not answer) must hold only its own launch, and the runtime gives every launch a deadline after
 * which it fails alone. The stuck filesystem is real: a FUSE mount whose server answers nothing
 * after INIT (test/fixtures/stuck-fs.py; mounting needs root). The deadline is also tried against a
 * server that does not run at all (SIGSTOP), which needs no root.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import type { Child, Launch } from '@toolvisor/process-runtime'
import { eventually, processesWith, within } from '@toolvisor/process-runtime/testing'
import { afterEach, describe, expect, it } from 'vitest'
import { ForkServer } from '../src/fork-server.js'
import { builtForkServer } from '../src/native-spawner.js'
import { fixture, tempDir } from './helpers.js'

const isRoot = process.geteuid?.() === 0
const hasFuse = spawnSync('test', ['-c', '/dev/fuse']).status === 0

const servers: ForkServer[] = []
const cleanups: Array<() => void> = []
afterEach(() => {
  for (const server of servers.splice(0)) server.close()
  while (cleanups.length > 0) cleanups.pop()!()
})

function server(deadlineMs: number): ForkServer {
  const started = new ForkServer(builtForkServer, { deadlineMs })
  servers.push(started)
  return started
}

function sh(script: string, extra: Partial<Launch> = {}): Launch {
  return {
    file: '/bin/sh',
    args: ['-c', script],
    env: { PATH: '/usr/bin:/bin' },
    cwd: '/',
    extraFds: [],
    ...extra,
  }
}

function stdoutOf(child: Child): Promise<string> {
  let stdout = ''
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk
  })
  return new Promise((resolve) => child.stdout!.once('close', () => resolve(stdout)))
}

/** A launch's error as code and message ('started' if it started). */
const settled = (launch: Promise<unknown>) =>
  launch.then(
    () => 'started' as const,
    (error: Error & { code?: string }) => ({ code: error.code, message: error.message }),
  )

/** The live (not zombie) children of `pid`. */
function childrenOf(pid: number): number[] {
  return readdirSync('/proc').flatMap((entry) => {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      return Number(ppid) === pid && state !== 'Z' ? [Number(entry)] : []
    } catch {
      return []
    }
  })
}

/** A mount at a fresh directory that never answers a lookup (see the file comment); unmounted after the test. */
async function stuckFilesystem(): Promise<string> {
  const mountpoint = join(tempDir('tv-stuck-'), 'mnt')
  mkdirSync(mountpoint)
  const daemon: ChildProcess = spawn('/usr/bin/python3', [fixture('stuck-fs.py'), mountpoint], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  // Killing the daemon fails every request still waiting (ENOTCONN); then the mount goes.
  cleanups.push(() => {
    daemon.kill('SIGKILL')
    spawnSync('umount', ['-l', mountpoint])
  })
  const line = new Promise<string>((resolve) =>
    createInterface({ input: daemon.stdout! }).once('line', resolve),
  )
  expect(await within(line, 10_000)).toBe('mounted')
  return mountpoint
}

function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')
  } catch {
    return true
  }
}

/** Whether `pid` waits for an answer of a FUSE filesystem (the kernel function it sleeps in). */
function waitsOnFuse(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/wchan`, 'utf8') === 'request_wait_answer'
  } catch {
    return false
  }
}

describe.skipIf(!isRoot || !hasFuse)(
  'a launch whose working directory never answers (needs root and /dev/fuse)',
  () => {
    it('holds only itself: a later launch starts meanwhile; it fails alone at its deadline and its child is killed', async () => {
      const mountpoint = await stuckFilesystem()
      const forks = server(1500)
      const stuck = settled(
        forks.launch(sh('echo never', { cwd: join(mountpoint, 'sub') }), { tool: '/tools/hung/run' }),
      )
      // The stuck child waits in the filesystem, for the answer to its lookup.
      expect(await eventually(() => childrenOf(forks.pid!).some(waitsOnFuse))).toBe(true)
      const other = await within(
        forks.launch(sh('echo other')).then(({ child }) => stdoutOf(child)),
        1000,
      )
      expect(other).toBe('other\n')
      expect(await within(stuck, 5000)).toEqual({
        code: 'RUNTIME_ERR_LAUNCH_TIMEOUT',
        message:
          'the launch of /tools/hung/run did not start within 1.5 s: the fork server had no word of its exec (its working directory, its executable or a grant on a filesystem that does not answer?); it was killed, and no other launch waited for it',
      })
      expect(await eventually(() => childrenOf(forks.pid!).length === 0)).toBe(true)
      expect(
        await within(
          forks.launch(sh('echo after')).then(({ child }) => stdoutOf(child)),
          1000,
        ),
      ).toBe('after\n')
    })

    it('a child forked but not yet answered dies with the server when the server is SIGKILLed', async () => {
      const mountpoint = await stuckFilesystem()
      const forks = server(10_000)
      const tag = randomUUID()
      const stuck = settled(
        forks.launch(sh('echo never', { cwd: join(mountpoint, 'sub'), env: { TV_STUCK: tag } }), {
          tool: '/tools/hung/run',
        }),
      )
      expect(await eventually(() => childrenOf(forks.pid!).some(waitsOnFuse))).toBe(true)
      const [child] = childrenOf(forks.pid!)
      process.kill(forks.pid!, 'SIGKILL')
      expect(await within(stuck, 5000)).toMatchObject({ message: expect.stringContaining('fork server') })
      // The runtime never learned its pid: only the kernel can take it down with the server.
      expect(await eventually(() => !existsSync(`/proc/${child}`) || isZombie(child!), 3000)).toBe(true)
    })

    it('bounds the launches waiting for their exec: past the bound one is refused at once, saying why', async () => {
      const mountpoint = await stuckFilesystem()
      const forks = server(3000)
      const waiting = Array.from({ length: 64 }, () =>
        settled(
          forks.launch(sh('echo never', { cwd: join(mountpoint, 'sub') }), { tool: '/tools/hung/run' }),
        ),
      )
      const refused = await within(
        settled(forks.launch(sh('echo one too many'), { tool: '/tools/more/run' })),
        1000,
      )
      expect(refused).toEqual({
        code: 'RUNTIME_ERR_SPAWN_FAILED',
        message:
          'cannot start /tools/more/run: 64 launches are already waiting for their exec in the fork server (a filesystem that does not answer?); try again once they fail at their deadline',
      })
      const outcomes = await within(Promise.all(waiting), 10_000)
      expect(outcomes).toEqual(
        waiting.map(() => expect.objectContaining({ code: 'RUNTIME_ERR_LAUNCH_TIMEOUT' })),
      )
      expect(await eventually(() => childrenOf(forks.pid!).length === 0)).toBe(true)
      expect(
        await within(
          forks.launch(sh('echo after')).then(({ child }) => stdoutOf(child)),
          1000,
        ),
      ).toBe('after\n')
    })
  },
)

describe('a launch the fork server never answers', () => {
  it('fails at its deadline; once the server runs again it kills that launch and serves the next', async () => {
    const forks = server(500)
    expect(await stdoutOf((await forks.launch(sh('echo up'))).child)).toBe('up\n')
    const tag = randomUUID()
    process.kill(forks.pid!, 'SIGSTOP')
    cleanups.push(() => process.kill(forks.pid!, 'SIGCONT'))
    const late = settled(
      forks.launch(sh('exec sleep 60', { env: { PATH: '/usr/bin:/bin', TV_LATE: tag } }), {
        tool: 'sleeper',
      }),
    )
    expect(await within(late, 3000)).toEqual({
      code: 'RUNTIME_ERR_LAUNCH_TIMEOUT',
      message:
        'the launch of sleeper did not start within 0.5 s: the fork server had no word of its exec (its working directory, its executable or a grant on a filesystem that does not answer?); it was killed, and no other launch waited for it',
    })
    process.kill(forks.pid!, 'SIGCONT')
    expect(
      await within(
        forks.launch(sh('echo again')).then(({ child }) => stdoutOf(child)),
        2000,
      ),
    ).toBe('again\n')
    // The late launch ran, or not, when the server read it: either way nothing of it is left, and
    // the server reaps its children (the last one's stdout may end a moment before it is reaped).
    expect(await eventually(() => processesWith('TV_LATE', tag).length === 0)).toBe(true)
    expect(await eventually(() => childrenOf(forks.pid!).length === 0)).toBe(true)
  })
})
