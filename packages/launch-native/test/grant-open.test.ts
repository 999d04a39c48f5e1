/**
 * The attacker's F4 and F10 (security review of 2026-12-01) at the launch itself: a tool that can
 * write around one of its grants replaces it between two calls with a FIFO, or with a symlink to a
 * FIFO or a device, and the next launch opens what is there. The fork server runs as root and
 * serves every session: an open(2) that follows the link opens, as root, whatever the tool points
 * at, and an open of a FIFO waits for a writer forever, with every later launch of every session
 * behind it. Each case runs through the fork server and through the path without one
 * (`spawnLaunch`, in a process of its own: the open it tries may block that whole process).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { mkdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import type { Child, Launch, Pin } from '@toolvisor/process-runtime'
import { hasReader, within } from '@toolvisor/process-runtime/testing'
import { afterEach, describe, expect, it } from 'vitest'
import { ForkServer } from '../src/fork-server.js'
import { builtForkServer } from '../src/native-spawner.js'
import { fixture, tempDir } from './helpers.js'

const isRoot = process.geteuid?.() === 0

const servers: ForkServer[] = []
const children: ChildProcess[] = []
afterEach(() => {
  for (const server of servers.splice(0)) server.close()
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL')
})

/** What came of a launch: the child's stdout once it ended, or the launch's error. */
type Outcome = { readonly started: string } | { readonly code?: string; readonly message: string }

function stdoutOf(child: Child): Promise<string> {
  let stdout = ''
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk
  })
  return new Promise((resolve) => child.stdout!.once('close', () => resolve(stdout)))
}

const runners: Record<string, (launch: Launch) => Promise<Outcome>> = {
  'the fork server': async (launch) => {
    const server = new ForkServer(builtForkServer)
    servers.push(server)
    try {
      const { child } = await server.launch(launch)
      return { started: await stdoutOf(child) }
    } catch (error) {
      return { code: (error as { code?: string }).code, message: (error as Error).message } as Outcome
    }
  },
  'spawnLaunch (no fork server)': (launch) => {
    const child = spawn(process.execPath, [fixture('launch-once.mjs'), JSON.stringify(launch)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    children.push(child)
    return new Promise((resolve) =>
      createInterface({ input: child.stdout! }).once('line', (line) => resolve(JSON.parse(line) as Outcome)),
    )
  },
}

/** What the runtime records of a grant at load. */
function pinOf(path: string, field: string): Pin {
  const stat = statSync(path, { bigint: true })
  return { identity: `${stat.dev}:${stat.ino}`, field }
}

/** A launch that shows what its grant descriptor (3) gives it, if it ever starts. */
function granted(path: string, pin?: Pin): Launch {
  return {
    file: '/bin/sh',
    args: ['-c', 'ls -l /proc/self/fd/3; echo ran'],
    env: { PATH: '/usr/bin:/bin' },
    cwd: '/',
    extraFds: [pin === undefined ? { kind: 'file', path } : { kind: 'file', path, pin }],
  }
}

/** Counts the opens of `path` (test/fixtures/opens.py, inotify) while `during` runs. */
async function opensDuring<T>(path: string, during: () => Promise<T>): Promise<{ value: T; opens: number }> {
  const watcher = spawn('/usr/bin/python3', [fixture('opens.py'), path], {
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  children.push(watcher)
  const lines = createInterface({ input: watcher.stdout! })[Symbol.asyncIterator]()
  expect((await lines.next()).value).toBe('watching')
  const value = await during()
  watcher.stdin!.end()
  const last = String((await lines.next()).value)
  expect(last).toMatch(/^opens \d+$/)
  return { value, opens: Number(last.split(' ')[1]) }
}

const changed = (field: string, path: string, now: string) =>
  `${field}: ${path} is no longer what was qualified at load (${now}); the tool was not started: put it back, or reload the tool`

describe.each(Object.keys(runners))('a grant the tool swapped, at the next launch through %s', (name) => {
  const run = runners[name]!

  it('F4: replaced by a FIFO, it is refused at once naming its field, and the FIFO is never opened', async () => {
    const dir = tempDir()
    const grant = join(dir, 'ref')
    mkdirSync(grant)
    const pin = pinOf(grant, '$.runtime.sandbox.fs.read[1]')
    rmSync(grant, { recursive: true })
    execFileSync('mkfifo', [grant])
    const outcome = await within(run(granted(grant, pin)), 3000)
    // Asked after the bound: a launch stuck in open(2) is a reader, and this lets it go on.
    const opened = hasReader(grant)
    expect(outcome).toEqual({
      code: 'RUNTIME_ERR_GRANT_CHANGED',
      message: changed('$.runtime.sandbox.fs.read[1]', grant, 'it is now a FIFO'),
    })
    expect(opened).toBe(false)
  })

  it('F10: swapped for a symlink to a FIFO, the FIFO is never opened (no reader ever appears)', async () => {
    const dir = tempDir()
    const grant = join(dir, 'ref')
    const fifo = join(dir, 'elsewhere')
    mkdirSync(grant)
    execFileSync('mkfifo', [fifo])
    const pin = pinOf(grant, '$.runtime.sandbox.fs.write[0]')
    rmSync(grant, { recursive: true })
    symlinkSync(fifo, grant)
    const outcome = await within(run(granted(grant, pin)), 3000)
    expect(hasReader(fifo)).toBe(false)
    expect(outcome).toEqual({
      code: 'RUNTIME_ERR_GRANT_CHANGED',
      message: changed('$.runtime.sandbox.fs.write[0]', grant, `it now leads to ${fifo} (a symlink)`),
    })
  })

  it('F10: a symlink on its way (its parent swapped) is refused the same way; the FIFO behind it is never opened', async () => {
    const dir = tempDir()
    const parent = join(dir, 'work')
    const elsewhere = join(dir, 'elsewhere')
    mkdirSync(join(parent, 'ref'), { recursive: true })
    mkdirSync(elsewhere)
    execFileSync('mkfifo', [join(elsewhere, 'ref')])
    const grant = join(parent, 'ref')
    const pin = pinOf(grant, '$.runtime.sandbox.fs.read[1]')
    rmSync(parent, { recursive: true })
    symlinkSync(elsewhere, parent)
    const outcome = await within(run(granted(grant, pin)), 3000)
    expect(hasReader(join(elsewhere, 'ref'))).toBe(false)
    expect(outcome).toEqual({
      code: 'RUNTIME_ERR_GRANT_CHANGED',
      message: changed(
        '$.runtime.sandbox.fs.read[1]',
        grant,
        `it now leads to ${join(elsewhere, 'ref')} (a symlink)`,
      ),
    })
  })

  it.skipIf(!isRoot)(
    'F10: swapped for a symlink to a character device, the device is never opened (needs root: mknod)',
    async () => {
      const dir = tempDir()
      const grant = join(dir, 'ref')
      // The null device's numbers: opening it does nothing, but inotify sees every open.
      const device = join(dir, 'device')
      execFileSync('mknod', [device, 'c', '1', '3'])
      writeFileSync(grant, 'granted\n')
      const pin = pinOf(grant, "the tool's executable")
      rmSync(grant)
      symlinkSync(device, grant)
      const { value, opens } = await opensDuring(device, () => within(run(granted(grant, pin)), 3000))
      expect(opens).toBe(0)
      expect(value).toEqual({
        code: 'RUNTIME_ERR_GRANT_CHANGED',
        message: changed("the tool's executable", grant, `it now leads to ${device} (a symlink)`),
      })
    },
  )

  it('F4: an unpinned descriptor (the exec helper) that is a FIFO is refused, not opened', async () => {
    const dir = tempDir()
    const fifo = join(dir, 'toolvisor-exec')
    execFileSync('mkfifo', [fifo])
    const outcome = await within(run(granted(fifo)), 3000)
    const opened = hasReader(fifo)
    expect(outcome).toEqual({
      code: 'RUNTIME_ERR_SPAWN_FAILED',
      message: `cannot open ${fifo}: it is a FIFO, not a directory or a regular file`,
    })
    expect(opened).toBe(false)
  })
})
