/**
 * Helpers for tests of packages built on the runtime (`@toolvisor/process-runtime/testing`): they
 * need real users and real processes, never mocks.
 */
import { execFileSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { createSocket } from 'node:dgram'
import {
  chmodSync,
  closeSync,
  constants,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
} from 'node:fs'
import { join } from 'node:path'

import { processesWithVariable, procStat } from '@toolvisor/containment'

export { markedProcesses } from '@toolvisor/containment'
export { box, boxesHere, type CgroupBox, forker } from '@toolvisor/containment/testing'
export { deadRun } from '@toolvisor/run-state/testing'
export { type UnixDatagramSink, unixDatagramSink } from './internal/datagram-sink.js'
export { loggedMechanism } from './internal/logged-mechanism.js'
export { output, preparedTool, processSpec, runtimeSpec } from './internal/test-specs.js'

/** A throwaway user with its own primary group and one supplementary group. */
export interface TestUser {
  readonly user: string
  readonly uid: number
  /** The user's primary group id (its own group). */
  readonly gid: number
  /** A supplementary group the user is a member of. */
  readonly group: string
  /** The id of {@link TestUser.group}. */
  readonly groupId: number
  /** Deletes the user, its own group and the supplementary group. */
  remove(): void
}

/**
 * Pids of the live processes (zombies excluded) whose environment holds `NAME=value`: how tests
 * prove that nothing they tagged is still running.
 */
export function processesWith(name: string, value: string): number[] {
  return processesWithVariable(name, (found) => found === value)
    .map(([pid]) => pid)
    .filter((pid) => {
      const stat = procStat(pid)
      return stat !== undefined && stat.state !== 'Z'
    })
}

/**
 * Pids of the live processes in a cgroup of run `runId` (in any hierarchy: its launches' trees, and
 * the fork server's child waiting in the tree made ahead), whatever they did to their environment.
 */
export function processesInRun(runId: string): number[] {
  const pids: number[] = []
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry)
    if (!Number.isInteger(pid)) continue
    try {
      if (procStat(pid)?.state === 'Z') continue
      if (readFileSync(`/proc/${pid}/cgroup`, 'utf8').includes(`/${runId}/`)) pids.push(pid)
    } catch {
      // exited meanwhile
    }
  }
  return pids
}

/** Pids of the live processes whose command line (arguments joined by spaces) contains `needle`. */
export function processesRunning(needle: string): number[] {
  const pids: number[] = []
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry)
    if (!Number.isInteger(pid) || pid === process.pid) continue
    try {
      const state = procStat(pid)?.state
      if (state === undefined || state === 'Z') continue
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').includes(needle)) pids.push(pid)
    } catch {
      // exited meanwhile
    }
  }
  return pids
}

/**
 * Polls `check` every 20 ms until it holds or `timeoutMs` passed, and returns its last answer:
 * what tests wait on instead of sleeping a fixed time.
 */
export async function eventually(check: () => boolean, timeoutMs = 5_000): Promise<boolean> {
  const end = Date.now() + timeoutMs
  for (;;) {
    if (check()) return true
    if (Date.now() > end) return false
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** `promise`'s value, or 'no answer' when it takes longer than `ms`: a hang seen as an outcome. */
export async function within<T>(promise: Promise<T>, ms: number): Promise<T | 'no answer'> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<'no answer'>((resolve) => {
    timer = setTimeout(() => resolve('no answer'), ms)
  })
  try {
    return await Promise.race([promise, late])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * Whether anything holds `fifo` open for reading, or waits in open(2) to: a writer's non-blocking
 * open then succeeds; with no reader it fails with ENXIO. (Its open also ends the wait of a reader
 * stuck in open(2), which lets a launch blocked there go on, and the test end.)
 */
export function hasReader(fifo: string): boolean {
  try {
    closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK))
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENXIO') return false
    throw error
  }
}

/**
 * Runs a shadow-utils command, retrying while another process (a parallel test file, another
 * package's tests) holds the /etc/passwd or /etc/group lock, or (userdel) while a process of the
 * user is still on its way out (a runtime's watchdog exits just after the runtime).
 */
function shadow(command: string, args: readonly string[]): void {
  for (let attempt = 1; ; attempt++) {
    try {
      execFileSync(command, [...args], { stdio: ['ignore', 'ignore', 'pipe'] })
      return
    } catch (error) {
      const stderr = String((error as { stderr?: Buffer }).stderr ?? '')
      if (attempt >= 50 || !/lock|try again|currently used by process/i.test(stderr)) throw error
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100)
    }
  }
}

/**
 * Creates a user (name unique per call, so parallel runs never collide) that belongs to a fresh
 * supplementary group. Needs root.
 */
export function createTestUser(prefix = 'tv'): TestUser {
  const suffix = randomUUID().replaceAll('-', '').slice(0, 8)
  const user = `${prefix}u${suffix}`
  const group = `${prefix}g${suffix}`
  shadow('groupadd', [group])
  try {
    shadow('useradd', [
      '--no-create-home',
      '--user-group',
      '--shell',
      '/usr/sbin/nologin',
      '--groups',
      group,
      user,
    ])
  } catch (error) {
    shadow('groupdel', [group])
    throw error
  }
  const id = (flag: string) => Number(execFileSync('id', [flag, user], { encoding: 'utf8' }).trim())
  const groupId = Number(execFileSync('getent', ['group', group], { encoding: 'utf8' }).split(':')[2])
  return {
    user,
    uid: id('-u'),
    gid: id('-g'),
    group,
    groupId,
    remove() {
      shadow('userdel', [user])
      shadow('groupdel', [group])
    },
  }
}

/**
 * Whether `user` can read `path` (every directory above it included). A test that runs code of the
 * checkout as an unprivileged user cannot when the checkout lies under a directory that user
 * cannot enter (a clone in root's home, or under `mktemp -d`): it then skips, saying so.
 */
export function readableBy(user: string, path: string): boolean {
  try {
    execFileSync(
      'setpriv',
      ['--reuid', user, '--regid', groupOf(user), '--init-groups', '--', 'test', '-r', path],
      {
        stdio: 'ignore',
      },
    )
    return true
  } catch {
    return false
  }
}

function groupOf(user: string): string {
  return execFileSync('id', ['-g', user], { encoding: 'utf8' }).trim()
}

/**
 * A fresh directory `user` (default `nobody`, the sandbox user) can write (mode 0777), outside
 * /tmp and /var/tmp (a sandbox's private /tmp would hide those): in `near` when that user can
 * reach it and it lies outside both; else, as root (a clone under a 0700 home or `mktemp -d`, or
 * one in /var/tmp), under the first of /srv, /opt and /var/lib that others may enter. The caller
 * removes it.
 */
export function sandboxUserDir(near: string, prefix: string, user = 'nobody'): string {
  let base = near
  const inTmp = ['/tmp', '/var/tmp'].some((tmp) => near === tmp || near.startsWith(`${tmp}/`))
  if (process.getuid?.() === 0 && (inTmp || !readableBy(user, near))) {
    base =
      ['/srv', '/opt', '/var/lib'].find((dir) => {
        try {
          return (statSync(dir).mode & 0o005) === 0o005
        } catch {
          return false
        }
      }) ?? near
  }
  const dir = mkdtempSync(join(base, `.${prefix}-`))
  chmodSync(dir, 0o777)
  return dir
}

/** The reason a test gives when it skips because the checkout is out of `user`'s reach. */
export function unreachableCheckout(user: string, path: string): string {
  return `skipped: ${path} is not readable by ${user} (the checkout lies under a directory other users cannot enter, such as a 0700 home or mktemp -d), so nothing of it can run as that user`
}

/** A UDP listener on 127.0.0.1 that keeps what reaches it: see {@link udpSink}. */
export interface UdpSink {
  readonly port: number
  /**
   * Sends a marker datagram from this process and waits for it, then returns (and forgets) the
   * datagrams that came before it: what a finished tool sent has been read by then, so a test
   * asserts "nothing came" without sleeping.
   */
  drain(): Promise<string[]>
  close(): Promise<void>
}

/** Opens a {@link UdpSink}. */
export async function udpSink(): Promise<UdpSink> {
  const socket = createSocket('udp4')
  const received: string[] = []
  let marked: (() => void) | undefined
  const marker = `udp-sink-marker-${randomUUID()}`
  socket.on('message', (message) => {
    const text = String(message)
    if (text === marker) marked?.()
    else received.push(text)
  })
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve))
  const port = socket.address().port
  return {
    port,
    async drain() {
      const arrived = new Promise<void>((resolve) => {
        marked = resolve
      })
      socket.send(marker, port, '127.0.0.1')
      await arrived
      return received.splice(0)
    },
    close: () => new Promise<void>((resolve) => socket.close(resolve)),
  }
}
