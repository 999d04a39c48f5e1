// What another user (the sandbox user, a test user) can reach of the checkout, a directory it can
// write, and the reason a test gives when it skips because the checkout is out of that user's reach.
import { execFileSync } from 'node:child_process'
import { chmodSync, mkdtempSync, statSync } from 'node:fs'
import { join } from 'node:path'

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
