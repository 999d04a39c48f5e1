/**
 * The attacker's F4 and F10 (security review of 2026-12-01) end to end, as the report ran them: a
 * Landlock tool whose declaration nests a grant inside its write grant
 * (`{"fs":{"read":[".","./work/ref"],"write":["./work"]}}`) replaces that grant during one call, with
 * a FIFO (F4) or with a symlink to a FIFO or a device (F10). Before the fix the fork server, which
 * runs as root and serves every session, opened whatever was there at the next launch: a FIFO
 * blocked it in open(2) for good, and every later launch of every session with it (`toolvisor mcp`
 * and `serve` alike; `serve` then no longer stopped on SIGTERM); a symlink was followed as root.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { hasReader, within } from '@toolvisor/process-runtime/testing'
import { afterEach, describe, expect, it } from 'vitest'
import { asUser, asUserSkip, type OrdinaryUser, ordinaryUser, seenAs, userDir } from './as-user.js'
import { bin, eventually, fixtures, tagged, tempDir } from './helpers.js'
import { dir, isRoot, load, sandboxedTool } from './sandbox-helpers.js'
import { clients, connect, serve } from './serve-helpers.js'

const CALL_BOUND_MS = 15_000
const stdio: Array<{ client: Client; tag: string }> = []
const started: ChildProcess[] = []
const watched: ChildProcess[] = []
afterEach(async () => {
  for (const child of watched.splice(0)) child.kill('SIGKILL')
  for (const { client, tag } of stdio.splice(0)) {
    await client.close()
    expect(await eventually(() => tagged(tag).length === 0, 5000), 'processes left running').toBe(true)
  }
  for (const child of started.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
})

/** A call's outcome: whether it failed, its text, how long it took. */
async function callOf(client: Client, name: string, script: string) {
  const began = Date.now()
  const result = await client
    .callTool({ name, arguments: { script } }, undefined, { timeout: CALL_BOUND_MS })
    .then(
      (answer) => ({
        isError: answer.isError === true,
        text: (answer.content as Array<{ text: string }>).map((c) => c.text).join('\n'),
      }),
      (error: Error) => ({ isError: true, text: `no answer: ${error.message}` }),
    )
  return { ...result, ms: Date.now() - began }
}

/**
 * The report's toolbox: `probe` nests a read grant (work/ref) inside its write grant (work);
 * `other` only reads its directory. `owner`: who owns it all (the user toolvisor runs as); else it
 * is root's, with work writable by the sandbox user.
 */
function toolbox(owner?: OrdinaryUser): string {
  const box = owner === undefined ? dir('tv-f4-box-') : userDir('tv-f4-box-', owner)
  mkdirSync(join(box, 'work', 'ref'), { recursive: true, mode: 0o777 })
  spawnSync('chmod', ['0777', join(box, 'work'), join(box, 'work', 'ref')])
  sandboxedTool(box, 'probe', { sandbox: { fs: { read: ['.', './work/ref'], write: ['./work'] } } })
  sandboxedTool(box, 'other', { sandbox: { fs: { read: ['.'] } } })
  if (owner !== undefined) spawnSync('chown', ['-R', `${owner.uid}:${owner.gid}`, box])
  return box
}

const plantFifo = (box: string) => `rm -rf ${box}/work/ref && mkfifo ${box}/work/ref && echo planted`
const changed = (field: string, path: string, now: string) =>
  `${field}: ${path} is no longer what was qualified at load (${now}); the tool was not started: put it back, or reload the tool`

/** `toolvisor mcp --toolbox BOX --sandbox landlock` with an SDK client over stdio, once its tools loaded. */
async function mcp(box: string): Promise<Client> {
  const tag = randomUUID()
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin, 'mcp', '--toolbox', box, '--sandbox', 'landlock', '--state-dir', tempDir('tv-f4-state-')],
    env: { ...(process.env as Record<string, string>), TV_TEST_TAG: tag },
    stderr: 'pipe',
  })
  let stderr = ''
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')))
  const client = new Client({ name: 'f4-test', version: '0' })
  await client.connect(transport)
  stdio.push({ client, tag })
  expect(await eventually(() => /toolboxes loaded in \d+ ms/.test(stderr), 20_000), stderr).toBe(true)
  return client
}

/** `toolvisor serve` as the ordinary user, its state and config in its own folder; resolves once it listens. */
async function serveAsUser(box: string, user: OrdinaryUser) {
  const state = userDir('tv-f4-state-', user)
  const config = join(state, 'toolvisor.json')
  writeFileSync(config, JSON.stringify({ toolboxes: [box], yieldMs: 0 }))
  spawnSync('chown', [`${user.uid}:${user.gid}`, config])
  const tag = randomUUID()
  const args = [seenAs(bin), 'serve', '--listen', '127.0.0.1:0', '--config', config, '--state-dir', state]
  const child = asUser(process.execPath, [...args, '--sandbox', 'landlock'], { env: { TV_TEST_TAG: tag } })
  started.push(child)
  let stderr = ''
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')))
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)))
  expect(await eventually(() => / at (http:\/\/\S+\/mcp) /.test(stderr), 20_000), stderr).toBe(true)
  const url = / at (http:\/\/\S+\/mcp) /.exec(stderr)![1]!
  const token = readFileSync(join(state, 'serve.token'), 'utf8').trim()
  return { child, tag, url, token, exited, stderr: () => stderr }
}

/**
 * The report's two sessions of `serve`: bob's tool runs; alice plants the FIFO and calls again,
 * which fails alone and quickly, naming the field; bob's tool still runs; SIGTERM stops `serve`
 * (exit 0) and nothing it started is left.
 */
async function twoSessions(
  box: string,
  daemon: { child: ChildProcess; tag: string; url: string; token: string; exited: Promise<number | null> },
) {
  const bob = (await connect(daemon.url, daemon.token, undefined, 'bob')).client
  const alice = (await connect(daemon.url, daemon.token, undefined, 'alice')).client
  expect(await callOf(bob, 'other', 'echo other-ran')).toMatchObject({ isError: false, text: 'other-ran\n' })
  expect(await callOf(alice, 'probe', plantFifo(box))).toMatchObject({ isError: false, text: 'planted\n' })
  const again = await callOf(alice, 'probe', 'echo second')
  const fifo = join(box, 'work', 'ref')
  const opened = hasReader(fifo)
  expect(again.text).toContain(changed('$.runtime.sandbox.fs.read[1]', fifo, 'it is now a FIFO'))
  expect(again).toMatchObject({ isError: true })
  expect(again.ms).toBeLessThan(5000)
  expect(opened).toBe(false)
  expect(await callOf(bob, 'other', 'echo other-ran')).toMatchObject({ isError: false, text: 'other-ran\n' })
  for (const client of clients.splice(0)) await client.close().catch(() => {})
  daemon.child.kill('SIGTERM')
  expect(await within(daemon.exited, 15_000)).toBe(0)
  expect(await eventually(() => tagged(daemon.tag).length === 0, 5000), 'processes left running').toBe(true)
}

describe.skipIf(!isRoot)('F4: a Landlock tool replaces its nested grant with a FIFO (root)', () => {
  it('toolvisor mcp: the next call of that tool fails naming the field; another tool still runs', async () => {
    const box = toolbox()
    const client = await mcp(box)
    expect(await callOf(client, 'probe', plantFifo(box))).toMatchObject({ isError: false, text: 'planted\n' })
    const second = await callOf(client, 'probe', 'echo second')
    const fifo = join(box, 'work', 'ref')
    const opened = hasReader(fifo)
    expect(second.text).toContain(changed('$.runtime.sandbox.fs.read[1]', fifo, 'it is now a FIFO'))
    expect(second).toMatchObject({ isError: true })
    expect(opened).toBe(false)
    expect(await callOf(client, 'other', 'echo other-ran')).toMatchObject({
      isError: false,
      text: 'other-ran\n',
    })
  }, 60_000)

  it('toolvisor serve, two sessions: alice fails alone and quickly, bob still runs, SIGTERM stops serve', async () => {
    const box = toolbox()
    const daemon = await serve(['--sandbox', 'landlock'], '127.0.0.1:0', {}, { config: { toolboxes: [box] } })
    await twoSessions(box, daemon)
  }, 90_000)
})

describe.skipIf(asUserSkip !== undefined)('F4: the same with toolvisor serve run as an ordinary user', () => {
  it('the tool runs as that user in its own directory: alice fails alone, bob still runs, SIGTERM stops serve', async () => {
    const user = ordinaryUser()
    const box = toolbox(user)
    const daemon = await serveAsUser(box, user)
    await twoSessions(box, daemon)
  }, 90_000)
})

/** Counts the opens of `path` (inotify; the runtime's fixture) while `during` runs. */
async function opensDuring<T>(path: string, during: () => Promise<T>): Promise<{ value: T; opens: number }> {
  const script = resolve(fixtures, '../../../process-runtime/test/fixtures/opens.py')
  const watcher = spawn('/usr/bin/python3', [script, path], { stdio: ['pipe', 'pipe', 'inherit'] })
  watched.push(watcher)
  const lines = createInterface({ input: watcher.stdout! })[Symbol.asyncIterator]()
  expect((await lines.next()).value).toBe('watching')
  const value = await during()
  watcher.stdin!.end()
  const last = String((await lines.next()).value)
  expect(last).toMatch(/^opens \d+$/)
  return { value, opens: Number(last.split(' ')[1]) }
}

describe.skipIf(!isRoot)('F10: a Landlock tool points its nested grant at something of root (root)', () => {
  async function swapper() {
    const box = toolbox()
    const { call } = await load(box, { sandbox: 'landlock' })
    const swap = (target: string) =>
      call('probe', `rm -rf ${box}/work/ref && ln -s ${target} ${box}/work/ref && echo swapped`)
    return { box, call, swap }
  }

  it('a symlink to a FIFO: the next call is refused naming the field, and the FIFO is never opened', async () => {
    const { box, call, swap } = await swapper()
    const fifo = join(dir('tv-f10-target-'), 'fifo')
    spawnSync('mkfifo', [fifo])
    expect(await swap(fifo)).toEqual({ isError: false, text: 'swapped\n' })
    const second = await within(call('probe', 'echo second'), 5000)
    expect(hasReader(fifo)).toBe(false)
    expect(second).toMatchObject({ isError: true })
    expect((second as { text: string }).text).toContain(
      changed(
        '$.runtime.sandbox.fs.read[1]',
        join(box, 'work', 'ref'),
        `it now leads to ${fifo} (a symlink)`,
      ),
    )
  }, 30_000)

  it('a symlink to a character device: the next call is refused, and the device is never opened', async () => {
    const { box, call, swap } = await swapper()
    // The null device's numbers: opening it does nothing, but inotify sees every open.
    const device = join(dir('tv-f10-target-'), 'device')
    spawnSync('mknod', [device, 'c', '1', '3'])
    expect(await swap(device)).toEqual({ isError: false, text: 'swapped\n' })
    const { value, opens } = await opensDuring(device, () => within(call('probe', 'echo second'), 5000))
    expect(opens).toBe(0)
    expect((value as { text: string }).text).toContain(
      changed(
        '$.runtime.sandbox.fs.read[1]',
        join(box, 'work', 'ref'),
        `it now leads to ${device} (a symlink)`,
      ),
    )
  }, 30_000)
})
