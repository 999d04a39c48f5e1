/**
 * toolvisor run as an ordinary user, as most people run it (for Claude Code or Codex, `toolvisor
 * serve` or `mcp` under their own login): the attacker tests run each finding this way as well as
 * as root. Needs root to make the user (`useradd`) and to switch to it (`setpriv`).
 *
 * The clone may sit under a folder only root can enter (`mktemp -d` is 0700, as root's home is);
 * then the command runs in a private mount namespace where the clone is bound at a path under
 * /var/tmp that every user can reach, and nothing else changes: the same host, the same /tmp and
 * /var/tmp, the user's own uid without any capability.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll } from 'vitest'

/** What this file's tests made for the user (its folders, the view of the clone): removed after them. */
const userDirs: string[] = []

/** The user the tests run toolvisor as (made once by `ordinaryUser`). */
export const ORDINARY_USER = 'tv-ordinary'

/** The account the tests use: an ordinary login with a home of its own. */
export interface OrdinaryUser {
  readonly name: string
  readonly uid: number
  readonly gid: number
  readonly home: string
}

/** Why as-user tests cannot run here, or undefined when they can (root, with setpriv and useradd). */
export const asUserSkip: string | undefined =
  process.geteuid?.() !== 0
    ? 'needs root: the test makes an ordinary user and runs toolvisor as it'
    : spawnSync('setpriv', ['--version']).status !== 0
      ? 'needs setpriv (util-linux) to switch to the ordinary user'
      : undefined

/** The ordinary user, made with `useradd -m` the first time (idempotent; never removed: other runs share it). */
export function ordinaryUser(): OrdinaryUser {
  const found = lookup()
  if (found !== undefined) return found
  const made = spawnSync('useradd', ['-m', '-s', '/bin/sh', '-U', ORDINARY_USER], { encoding: 'utf8' })
  // A concurrent test file may have made it meanwhile (useradd then exits 9).
  const user = lookup()
  if (user === undefined) throw new Error(`useradd ${ORDINARY_USER} failed: ${made.stderr}`)
  return user
}

function lookup(): OrdinaryUser | undefined {
  const line = spawnSync('getent', ['passwd', ORDINARY_USER], { encoding: 'utf8' }).stdout.trim()
  if (line === '') return undefined
  const [name, , uid, gid, , home] = line.split(':')
  return { name: name!, uid: Number(uid), gid: Number(gid), home: home! }
}

/** The repository's root (three levels above this file: packages/cli/test). */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..')

/** Whether `user` can enter every directory down to `path` and read it. */
function reachable(path: string, user: OrdinaryUser): boolean {
  const check = spawnSync(
    'setpriv',
    [
      '--reuid',
      String(user.uid),
      '--regid',
      String(user.gid),
      '--clear-groups',
      'test',
      '-r',
      path,
      '-a',
      '-x',
      path,
    ],
    { stdio: 'ignore' },
  )
  return check.status === 0
}

/** A place under /var/tmp where the clone is seen from inside the namespace, made once per test file. */
let view: string | undefined
function viewOfRoot(): string {
  if (view !== undefined) return view
  // Only a mount point: the bind brings the clone's own mode along.
  view = mkdtempSync(join('/var/tmp', 'tv-clone-view-'))
  userDirs.push(view)
  return view
}

/** A path of the clone as the ordinary user's command sees it (unchanged when the clone is reachable). */
export function seenAs(path: string, user: OrdinaryUser = ordinaryUser()): string {
  const root = realpathSync(repoRoot)
  if (reachable(root, user)) return path
  const rel = relative(root, path)
  if (rel.startsWith(`..${sep}`) || rel === '..') return path
  return join(viewOfRoot(), rel)
}

/** What `asUser` starts. */
export interface AsUserOptions {
  readonly env?: Readonly<Record<string, string>>
  readonly cwd?: string
  readonly stdio?: 'pipe' | 'ignore'
}

/** What `asUser` spawns: for a transport that spawns by itself (the MCP SDK's stdio client). */
export interface UserCommand {
  readonly command: string
  readonly args: string[]
  readonly cwd: string
  readonly env: Record<string, string>
}

/**
 * `file ARGS` as the ordinary user: its uid and gid, its groups, `HOME`, `USER`, `LOGNAME` and
 * `SHELL` of that user, PATH and `env` on top, no capability. Paths of the clone in `file`, `args`
 * and `cwd` must already be as the user sees them (`seenAs`).
 */
export function userCommand(file: string, args: readonly string[], options: AsUserOptions = {}): UserCommand {
  const user = ordinaryUser()
  const env = {
    PATH: `${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`,
    HOME: user.home,
    USER: user.name,
    LOGNAME: user.name,
    SHELL: '/bin/sh',
    ...options.env,
  }
  const setpriv = [
    'setpriv',
    '--reuid',
    String(user.uid),
    '--regid',
    String(user.gid),
    '--init-groups',
    '--',
    file,
    ...args,
  ]
  const root = realpathSync(repoRoot)
  if (reachable(root, user)) {
    return { command: setpriv[0]!, args: setpriv.slice(1), cwd: options.cwd ?? user.home, env }
  }
  return {
    command: 'unshare',
    args: [
      '--mount',
      '--propagation',
      'private',
      '--',
      'sh',
      '-c',
      'mount --bind "$1" "$2" && cd "$3" && shift 3 && exec "$@"',
      'as-user',
      root,
      viewOfRoot(),
      options.cwd ?? user.home,
      ...setpriv,
    ],
    // Outside the namespace the view is an empty folder: the shell changes directory inside it.
    cwd: '/',
    env,
  }
}

/** Starts `userCommand(file, args, options)`. */
export function asUser(file: string, args: readonly string[], options: AsUserOptions = {}): ChildProcess {
  const { command, args: argv, cwd, env } = userCommand(file, args, options)
  return spawn(command, argv, {
    cwd,
    env,
    stdio: options.stdio === 'ignore' ? 'ignore' : ['pipe', 'pipe', 'pipe'],
  })
}

// The user's home is shared by every run on this host: nothing of a test file's stays there.
afterAll(() => {
  for (const made of userDirs.splice(0)) rmSync(made, { recursive: true, force: true })
  view = undefined
})

/** A folder the ordinary user owns (mode 0700), under its home; removed after the test file. */
export function userDir(prefix: string, user: OrdinaryUser = ordinaryUser()): string {
  const made = mkdtempSync(join(user.home, prefix))
  spawnSync('chown', [`${user.uid}:${user.gid}`, made])
  userDirs.push(made)
  return made
}
