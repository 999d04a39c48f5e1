// Throwaway users for tests that run something as another user: made with shadow-utils, a name
// unique per call, removed by the test. Needs root.
import { execFileSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'

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
