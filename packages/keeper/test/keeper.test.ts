import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { nodeSpawner } from '@toolvisor/process-runtime'
import { createTestUser, eventually } from '@toolvisor/test-kit'
import { afterEach, describe, expect, it } from 'vitest'
import { Keepers, KeptChild } from '../src/index.js'
import { alive, ticker } from './helpers.js'

/**
 * The keeper from outside: a "daemon" (a Node process of its own, `daemon.mjs`) starts a kept
 * process and is killed with kill -9; the test, as the next daemon, re-adopts what it left.
 */

const daemonScript = join(import.meta.dirname, 'daemon.mjs')

const cleanups: (() => void)[] = []
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup()
})

function stateRoot(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tv-keeper-'))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  return join(dir, 'keep')
}

interface Daemon {
  readonly process: ChildProcess
  readonly dir: string
  readonly pid: number
  readonly keeper: number
}

/** Starts a daemon that keeps `python3 SERVICE` under `root`; resolves once it told what it started. */
async function startDaemon(root: string, extra: Record<string, unknown> = {}): Promise<Daemon> {
  const daemon = spawn(process.execPath, [daemonScript, JSON.stringify({ root, ...extra, argv: ticker })], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  cleanups.push(() => daemon.kill('SIGKILL'))
  const [line] = await new Promise<string[]>((resolve) => {
    createInterface({ input: daemon.stdout! }).once('line', (text) => resolve([text]))
  })
  const said = JSON.parse(line!) as { dir: string; pid: number; keeper: number }
  cleanups.push(() => {
    for (const pid of [said.pid, said.keeper])
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        // gone
      }
  })
  return { process: daemon, ...said }
}

function lines(child: KeptChild): { readonly all: string[] } {
  const seen = { all: [] as string[] }
  let rest = ''
  child.stderr.resume()
  child.stdout.on('data', (chunk: Buffer) => {
    const text = rest + chunk.toString()
    const parts = text.split('\n')
    rest = parts.pop()!
    seen.all.push(...parts)
  })
  return seen
}

async function killDaemon(daemon: Daemon): Promise<void> {
  daemon.process.kill('SIGKILL')
  await new Promise((resolve) => daemon.process.once('exit', resolve))
}

describe('a kept process outlives the daemon that started it', () => {
  it('kill -9 of the daemon: a new one re-adopts it (same pid), reads the gap in order and once, is answered on stdin, gets the exit once, and nothing is left', async () => {
    const root = stateRoot()
    const daemon = await startDaemon(root)
    const out = join(daemon.dir, 'out')
    expect(await eventually(() => existsSync(out) && statSync(out).size > 50)).toBe(true)
    await killDaemon(daemon)
    const sizeAtDeath = statSync(out).size
    // The process goes on with no daemon at all: its ticks land in its keeper's file.
    expect(await eventually(() => statSync(out).size > sizeAtDeath + 200)).toBe(true)
    expect(alive(daemon.pid)).toBe(true)

    const keepers = new Keepers({ root })
    expect(keepers.list()).toEqual([daemon.dir])
    const child = await keepers.adopt(daemon.dir)
    expect(child.pid).toBe(daemon.pid)
    const seen = lines(child)
    let exits = 0
    const exited = new Promise<[number | null, string | null]>((resolve) =>
      child.on('exit', (code, signal) => {
        exits++
        resolve([code, signal])
      }),
    )
    const closed = new Promise((resolve) => child.once('close', resolve))
    child.stdin.write('hello\n')
    expect(await eventually(() => seen.all.includes('echo: hello'))).toBe(true)
    child.stdin.write('quit\n')
    expect(await exited).toEqual([7, null])
    await closed
    // Every tick from the first, in order, none twice, the ones printed while no daemon ran included.
    const ticks = seen.all.filter((line) => line.startsWith('tick ')).map((line) => Number(line.slice(5)))
    expect(ticks.length).toBeGreaterThan(10)
    expect(ticks).toEqual(ticks.map((_, i) => i))
    expect(exits).toBe(1)
    // Released: its keeper removed its directory and went.
    expect(await eventually(() => !existsSync(daemon.dir) && !alive(daemon.keeper))).toBe(true)
    expect(alive(daemon.pid)).toBe(false)
  })

  it('a daemon that never comes back: past the bound, the keeper kills its process, removes its directory and goes', async () => {
    const root = stateRoot()
    const daemon = await startDaemon(root, { reapAfterMs: 1000 })
    await killDaemon(daemon)
    expect(alive(daemon.pid)).toBe(true)
    expect(await eventually(() => !alive(daemon.pid) && !alive(daemon.keeper), 10_000)).toBe(true)
    expect(existsSync(daemon.dir)).toBe(false)
  })

  it('a keeper killed with kill -9 while no daemon runs: re-adopting it fails, saying where; its process dies of its broken stdout', async () => {
    const root = stateRoot()
    const daemon = await startDaemon(root)
    await killDaemon(daemon)
    process.kill(daemon.keeper, 'SIGKILL')
    expect(await eventually(() => !alive(daemon.keeper))).toBe(true)
    const keepers = new Keepers({ root })
    await expect(keepers.adopt(daemon.dir)).rejects.toThrow(`no keeper answers in ${daemon.dir}`)
    // Its next tick meets a closed pipe.
    expect(await eventually(() => !alive(daemon.pid))).toBe(true)
  })

  it('the daemon gone, its kept process killed meanwhile: the new daemon gets its exit (the signal) and everything it wrote', async () => {
    const root = stateRoot()
    const daemon = await startDaemon(root)
    await killDaemon(daemon)
    const out = join(daemon.dir, 'out')
    expect(await eventually(() => statSync(out).size > 20)).toBe(true)
    process.kill(daemon.pid, 'SIGKILL')
    expect(await eventually(() => !alive(daemon.pid))).toBe(true)
    const child = await new Keepers({ root }).adopt(daemon.dir)
    const seen = lines(child)
    const closed = new Promise((resolve) => child.once('close', resolve))
    const exit = await new Promise((resolve) => child.once('exit', (code, signal) => resolve([code, signal])))
    expect(exit).toEqual([null, 'SIGKILL'])
    await closed
    expect(seen.all[0]).toBe('tick 0')
    expect(await eventually(() => !existsSync(daemon.dir))).toBe(true)
  })
})

describe('what a keeper keeps', () => {
  it('past its cap a stream is read and dropped, never written: the file stops at the cap, the process runs to its end, and stderr says how much was not kept', async () => {
    const root = stateRoot()
    const keepers = new Keepers({ root, capBytes: 1000 })
    const script =
      'import sys; sys.stdout.write("x" * 5000); sys.stdout.flush(); print("done", file=sys.stderr)'
    const kept = keepers.wrap({
      file: '/usr/bin/python3',
      args: ['-c', script],
      env: {},
      cwd: '/',
      extraFds: [],
    })
    const spawned = await nodeSpawner.launch(kept.launch)
    const child = await kept.attach(spawned.child.stdout, spawned.child.stderr)
    let out = ''
    let err = ''
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()))
    const closed = new Promise((resolve) => child.once('close', resolve))
    const exit = await new Promise((resolve) => child.once('exit', (code) => resolve(code)))
    await closed
    expect(exit).toBe(0)
    expect(out).toBe('x'.repeat(1000))
    expect(err).toBe(
      "done\n\n[toolvisor: 4000 bytes of stdout past the keeper's cap were not kept (decision 0113)]\n",
    )
    expect(child.state.dropped).toEqual({ out: 4000, err: 0 })
  })
})

describe('a keeper of another version', () => {
  it('is refused with what to do, never misread', async () => {
    const dir = join(stateRoot(), 'k')
    mkdirSync(dir, { recursive: true })
    // A keeper that speaks protocol 2: its welcome, then nothing this client knows.
    const server = createServer((socket) => socket.end('PID 4242 4243 2\nSHINY new\n'))
    await new Promise<void>((resolve) => server.listen(join(dir, 'sock'), resolve))
    cleanups.push(() => server.close())
    await expect(KeptChild.connect(dir, 'any')).rejects.toThrow(
      `the keeper in ${dir} speaks protocol 2, this toolvisor 1: this version cannot take it back (the version that kept it can)`,
    )
  })
})

describe('who a keeper answers', () => {
  it('a wrong secret gets nothing, and the keeper goes on for the right one', async () => {
    const root = stateRoot()
    const daemon = await startDaemon(root)
    await killDaemon(daemon)
    const { KeptChild } = await import('../src/kept-child.js')
    await expect(KeptChild.connect(daemon.dir, 'not-the-secret')).rejects.toThrow(/closed the connection/)
    const child = await new Keepers({ root }).adopt(daemon.dir)
    expect(child.pid).toBe(daemon.pid)
    lines(child)
    process.kill(daemon.pid, 'SIGKILL')
    await new Promise((resolve) => child.once('close', resolve))
  })

  const root = process.getuid?.() === 0
  it.skipIf(!root)(
    `another uid is refused before it says anything (${root ? 'runs as root: a throwaway user tries' : 'skipped: making a second user needs root'})`,
    async () => {
      const dir = stateRoot()
      const daemon = await startDaemon(dir)
      const user = createTestUser()
      cleanups.push(() => user.remove())
      // Even given the secret and a way through the directories, another user is closed at once.
      const secret = readFileSync(join(dir, 'secret'), 'utf8').trim()
      execFileSync('chmod', ['755', join(dir, '..'), dir, daemon.dir])
      execFileSync('chmod', ['666', join(daemon.dir, 'sock')])
      const script = `const s=require('net').connect(${JSON.stringify(join(daemon.dir, 'sock'))});let t='';s.on('data',d=>t+=d);s.on('connect',()=>s.write('HELLO ${secret}\\n'));s.on('close',()=>{console.log(JSON.stringify(t));});s.on('error',e=>console.log('error',e.code))`
      const said = execFileSync(
        'setpriv',
        [`--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups', process.execPath, '-e', script],
        {
          encoding: 'utf8',
        },
      )
      // Closed before a word: nothing read (a write may meet the closed socket first).
      expect(said.trim().split('\n').at(-1)).toBe('""')
      await killDaemon(daemon)
    },
  )
})
