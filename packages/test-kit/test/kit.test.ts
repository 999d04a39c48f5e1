/** The helpers themselves, on real processes, sockets and users: each check fails if its helper lies. */
import { execFileSync, spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { createSocket } from 'node:dgram'
import { chmodSync, closeSync, constants, existsSync, mkdtempSync, openSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import {
  createTestUser,
  eventually,
  hasReader,
  processesRunning,
  processesWith,
  readableBy,
  sandboxUserDir,
  udpSink,
  unixDatagramSink,
  unreachableCheckout,
  within,
} from '../src/index.js'

const isRoot = process.getuid?.() === 0
const hasPython = existsSync('/usr/bin/python3')

const SEND = `
import socket, sys
target, text = sys.argv[1], sys.argv[2]
address = "\\0" + target[1:] if target.startswith("@") else target
socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(text.encode(), address)
`

const cleanups: Array<() => Promise<void> | void> = []

afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

/** A directory removed after the test. */
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tv-kit-'))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

describe('waiting', () => {
  it('eventually holds once its condition does, and gives up after its timeout', async () => {
    const start = Date.now()
    expect(await eventually(() => Date.now() - start >= 100, 2_000)).toBe(true)
    const before = Date.now()
    expect(await eventually(() => false, 100)).toBe(false)
    expect(Date.now() - before).toBeGreaterThanOrEqual(100)
  })

  it("within gives a settled promise's value, and 'no answer' for one that never settles", async () => {
    expect(await within(Promise.resolve(7), 1_000)).toBe(7)
    expect(await within(new Promise<never>(() => {}), 50)).toBe('no answer')
  })

  it('hasReader tells a FIFO with a reader from one without', () => {
    const fifo = join(tempDir(), 'fifo')
    execFileSync('mkfifo', [fifo])
    expect(hasReader(fifo)).toBe(false)
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK)
    try {
      expect(hasReader(fifo)).toBe(true)
    } finally {
      closeSync(reader)
    }
  })
})

describe('process scans', () => {
  it('find a running child by its environment marker and command line, and not once it is killed', async () => {
    const marker = randomUUID()
    const seconds = `60.${Math.floor(Math.random() * 1e6)}`
    const child = spawn('sleep', [seconds], {
      detached: true,
      stdio: 'ignore',
      env: { TV_KIT_MARKER: marker },
    })
    const exited = new Promise((resolve) => child.once('exit', resolve))
    cleanups.push(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL')
      } catch {
        // gone already, as it should be
      }
    })
    // Before its exec, /proc shows the test's own environment: wait for the marker.
    expect(await eventually(() => processesWith('TV_KIT_MARKER', marker).length > 0)).toBe(true)
    expect(processesWith('TV_KIT_MARKER', marker)).toEqual([child.pid])
    expect(processesWith('TV_KIT_MARKER', `${marker}-other`)).toEqual([])
    expect(processesRunning(`sleep ${seconds}`)).toEqual([child.pid])
    process.kill(-child.pid!, 'SIGKILL')
    await exited
    expect(processesWith('TV_KIT_MARKER', marker)).toEqual([])
    expect(processesRunning(`sleep ${seconds}`)).toEqual([])
    // Its group has no member left, not even a zombie: signal 0 to it finds nothing.
    expect(() => process.kill(-child.pid!, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }))
  })
})

describe('datagram sinks', () => {
  it('udpSink keeps what is sent to its port, each datagram once', async () => {
    const sink = await udpSink()
    cleanups.push(() => sink.close())
    const sender = createSocket('udp4')
    cleanups.push(() => new Promise<void>((resolve) => sender.close(resolve)))
    for (const text of ['first', 'second']) {
      await new Promise<void>((resolve, reject) =>
        sender.send(text, sink.port, '127.0.0.1', (error) => (error ? reject(error) : resolve())),
      )
    }
    expect(await sink.drain()).toEqual(['first', 'second'])
    expect(await sink.drain()).toEqual([])
  })

  it.skipIf(!hasPython)(
    'unixDatagramSink keeps what is sent to its path and its abstract name, and removes its file (needs /usr/bin/python3)',
    async () => {
      const path = join(tempDir(), 'sink.sock')
      const abstract = `@tv-kit-${randomUUID()}`
      const sink = await unixDatagramSink([path, abstract])
      cleanups.push(() => sink.close())
      expect(statSync(path).mode & 0o777).toBe(0o777)
      // Node has no unix datagram socket: python3 sends, `@name` meaning the abstract name.
      const send = (target: string, text: string) =>
        execFileSync('/usr/bin/python3', ['-c', SEND, target, text])
      send(path, 'to the path')
      send(abstract, 'to the name')
      expect(await sink.drain()).toEqual([
        [path, 'to the path'],
        [abstract, 'to the name'],
      ])
      expect(await sink.drain()).toEqual([])
      await sink.close()
      expect(existsSync(path)).toBe(false)
    },
  )
})

describe('users and reach', () => {
  it.skipIf(!isRoot)(
    'createTestUser makes a user in its own and a supplementary group, and removes them (needs root)',
    () => {
      const account = createTestUser('tvkt')
      let removed = false
      cleanups.push(() => {
        if (!removed) account.remove()
      })
      expect(execFileSync('id', ['-u', account.user], { encoding: 'utf8' }).trim()).toBe(String(account.uid))
      expect(execFileSync('id', ['-G', account.user], { encoding: 'utf8' }).trim().split(' ')).toEqual(
        expect.arrayContaining([String(account.gid), String(account.groupId)]),
      )
      const dir = tempDir()
      expect(readableBy(account.user, dir)).toBe(false)
      chmodSync(dir, 0o755)
      expect(readableBy(account.user, dir)).toBe(true)
      account.remove()
      removed = true
      expect(() => execFileSync('id', [account.user], { stdio: 'ignore' })).toThrow()
    },
  )

  it.skipIf(!isRoot)(
    'sandboxUserDir gives a directory outside /tmp any user can write (needs root to look elsewhere)',
    () => {
      const dir = sandboxUserDir(tempDir(), 'tv-kit')
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
      expect(dir.startsWith('/tmp/')).toBe(false)
      expect(statSync(dir).mode & 0o777).toBe(0o777)
      expect(readableBy('nobody', dir)).toBe(true)
    },
  )

  it('unreachableCheckout names the user and the path', () => {
    expect(unreachableCheckout('nobody', '/root/src')).toBe(
      'skipped: /root/src is not readable by nobody (the checkout lies under a directory other users cannot enter, such as a 0700 home or mktemp -d), so nothing of it can run as that user',
    )
  })
})
