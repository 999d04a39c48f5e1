/**
 * Helpers for tests of packages built on the runtime (`@toolvisor/process-runtime/testing`): they
 * need real users and real processes, never mocks.
 */
import { execFileSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'

export { markedProcesses } from './procfs.js'

/** A throwaway user with its own group and one supplementary group. */
export interface TestUser {
  readonly user: string
  readonly uid: number
  /** A supplementary group the user is a member of. */
  readonly group: string
  /** Deletes the user and the group. */
  remove(): void
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
  shadow('useradd', ['--no-create-home', '--shell', '/usr/sbin/nologin', '--groups', group, user])
  const uid = Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim())
  return {
    user,
    uid,
    group,
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

/** The reason a test gives when it skips because the checkout is out of `user`'s reach. */
export function unreachableCheckout(user: string, path: string): string {
  return `skipped: ${path} is not readable by ${user} (the checkout lies under a directory other users cannot enter, such as a 0700 home or mktemp -d), so nothing of it can run as that user`
}
