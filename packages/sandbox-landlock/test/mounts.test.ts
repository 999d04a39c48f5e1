/**
 * Issue 26 point 7 at the launcher: a writable workspace arms code that runs later, outside
 * (`.git/hooks/pre-commit`, `.envrc`). Inside the launcher's mount namespace, `--ro-over PATH`
 * makes an existing PATH read-only and `--null-over PATH` puts an empty read-only placeholder where
 * PATH is missing, so it cannot be created; the rest of the write grant stays writable. A symlink
 * swapped into the path cannot redirect the mount. As root (the tool as root and as a run_as user)
 * and as an ordinary user (the launcher in a user namespace).
 */
import { spawnSync } from 'node:child_process'
import {
  chmodSync,
  chownSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { builtLauncher } from '../src/internal/launcher.js'
import { execMinimum } from '../src/internal/policy.js'
import {
  ALLOW_ALL,
  createTestUser,
  FILTER_ARGS,
  filterFd,
  filterStdio,
  hasPython,
  isRoot,
  killStarted,
  node,
  nodeOutsideUsr,
  probeTool,
  removeTempDirs,
  run,
  type TestUser,
  tempDir,
} from './helpers.js'

const minimum = execMinimum()
const base = [
  ...FILTER_ARGS,
  ...minimum.read.flatMap((p) => ['--ro', p]),
  ...minimum.write.flatMap((p) => ['--rw', p]),
  ...(nodeOutsideUsr ? ['--ro', node] : []),
]
let user: TestUser | undefined

beforeAll(() => {
  if (isRoot) user = createTestUser('tvmo')
})
afterEach(async () => {
  await killStarted()
})
afterAll(() => {
  if (user !== undefined) user.remove()
  removeTempDirs()
})

/** A write grant W holding W/.git/hooks (with a sample hook) and W/.git/config, and no W/.envrc. */
function workspace(owner?: { uid: number; gid: number }): string {
  const w = tempDir('tv-landlock-ws-')
  mkdirSync(join(w, '.git', 'hooks'), { recursive: true })
  writeFileSync(join(w, '.git', 'hooks', 'pre-commit.sample'), 'sample\n')
  writeFileSync(join(w, '.git', 'config'), '[core]\n')
  if (owner !== undefined) {
    for (const path of [w, join(w, '.git'), join(w, '.git', 'hooks'), join(w, '.git', 'config')]) {
      chownSync(path, owner.uid, owner.gid)
    }
  }
  return w
}

/** What the tool tries in W: the protected paths, then an ordinary file. */
const attempts = (w: string) => [
  ['hook', 'write', join(w, '.git', 'hooks', 'pre-commit'), '#!/bin/sh\necho armed\n'],
  ['sample', 'write', join(w, '.git', 'hooks', 'pre-commit.sample'), 'changed'],
  ['envrc', 'write', join(w, '.envrc'), 'echo armed'],
  ['envrcRead', 'read', join(w, '.envrc')],
  ['envrcSize', 'stat', join(w, '.envrc')],
  ['envrcAway', 'rename', join(w, '.envrc'), join(w, 'moved')],
  ['hooksAway', 'rename', join(w, '.git', 'hooks'), join(w, '.git', 'hooks-moved')],
  ['config', 'write', join(w, '.git', 'config'), '[core]\n\tfsmonitor = true\n'],
  ['other', 'write', join(w, 'other'), 'work'],
]

const expected = {
  hook: 'EROFS',
  sample: 'EROFS',
  envrc: 'EROFS',
  envrcRead: '',
  envrcSize: 0,
  envrcAway: 'EBUSY',
  hooksAway: 'EBUSY',
  config: 'ok',
  other: 'ok',
}

/** The host's view after the run: nothing armed, the placeholder an empty regular file. */
function expectUnarmed(w: string): void {
  expect(existsSync(join(w, '.git', 'hooks', 'pre-commit'))).toBe(false)
  expect(readFileSync(join(w, '.git', 'hooks', 'pre-commit.sample'), 'utf8')).toBe('sample\n')
  const placeholder = lstatSync(join(w, '.envrc'))
  expect(placeholder.isFile() && placeholder.size).toBe(0)
  expect(readFileSync(join(w, 'other'), 'utf8')).toBe('work')
}

function overs(w: string): string[] {
  return ['--pid-ns', '--ro-over', join(w, '.git', 'hooks'), '--null-over', join(w, '.envrc')]
}

describe('--ro-over and --null-over inside a write grant', () => {
  it('as root: hooks read-only, .envrc an empty read-only placeholder, the rest writable', async () => {
    const w = workspace()
    const tool = probeTool()
    const result = await run({
      file: builtLauncher,
      args: [...base, '--ro', tool.dir, '--rw', w, ...overs(w), '--', tool.file, JSON.stringify(attempts(w))],
      env: { PATH: '/usr/bin:/bin' },
      cwd: '/',
      extraFds: [filterFd],
    })
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    expect(JSON.parse(result.stdout)).toEqual(expected)
    expectUnarmed(w)
  })

  it.skipIf(!isRoot)('as root, the tool as a run_as user (needs root to make the user)', async () => {
    const u = user!
    const w = workspace(u)
    const tool = probeTool()
    const result = await run({
      file: builtLauncher,
      args: [
        ...base,
        '--ro',
        tool.dir,
        '--rw',
        w,
        ...overs(w),
        '--user',
        u.user,
        '--',
        tool.file,
        JSON.stringify(attempts(w)),
      ],
      env: { PATH: '/usr/bin:/bin' },
      cwd: '/',
      extraFds: [filterFd],
    })
    expect(result.stderr).toBe('')
    expect(JSON.parse(result.stdout)).toEqual(expected)
    expectUnarmed(w)
  })

  it.skipIf(!isRoot)(
    'as an ordinary user: the same, in the user namespace the launcher makes (needs root to make the user)',
    () => {
      const u = user!
      const w = workspace(u)
      const tool = probeTool()
      // A copy the user can reach: the checkout may lie under a directory other users cannot enter.
      const launcher = join(tempDir(), 'landlock-launcher')
      copyFileSync(builtLauncher, launcher)
      chmodSync(launcher, 0o755)
      const result = spawnSync(
        launcher,
        [...base, '--ro', tool.dir, '--rw', w, ...overs(w), '--', tool.file, JSON.stringify(attempts(w))],
        {
          encoding: 'utf8',
          uid: u.uid,
          gid: u.gid,
          cwd: '/',
          env: { PATH: '/usr/bin:/bin' },
          stdio: filterStdio(),
        },
      )
      expect(result.stderr).toBe('')
      expect(result.status).toBe(0)
      expect(JSON.parse(result.stdout)).toEqual(expected)
      expectUnarmed(w)
    },
  )

  it('a symlink swapped into the path is refused: the mount never lands where it leads', async () => {
    const w = workspace()
    const elsewhere = tempDir('tv-landlock-elsewhere-')
    mkdirSync(join(elsewhere, 'hooks'))
    // The tool, in an earlier run, put a link to another directory where a protected path lies.
    symlinkSync(elsewhere, join(w, 'linked'))
    const marker = join(tempDir(), 'ran')
    const result = await run({
      file: builtLauncher,
      args: [
        ...base,
        '--rw',
        w,
        '--rw',
        elsewhere,
        '--pid-ns',
        '--ro-over',
        join(w, 'linked', 'hooks'),
        '--',
        '/bin/sh',
        '-c',
        `echo > ${marker}`,
      ],
      env: { PATH: '/usr/bin:/bin' },
      cwd: '/',
      extraFds: [filterFd],
    })
    expect(result.code).toBe(125)
    expect(result.stderr).toBe(
      `toolvisor-landlock: --ro-over ${join(w, 'linked', 'hooks')}: Too many levels of symbolic links\n`,
    )
    expect(existsSync(marker)).toBe(false)
  })
})

describe('--ro-over and --null-over refuse, with 125 and one line, the command not run', () => {
  const refused = async (args: string[]) => {
    const marker = join(tempDir(), 'ran')
    const result = await run({
      file: builtLauncher,
      args: [...base, ...args, '--', '/bin/sh', '-c', `echo > ${marker}`],
      env: { PATH: '/usr/bin:/bin' },
      cwd: '/',
      extraFds: [filterFd],
    })
    expect(existsSync(marker)).toBe(false)
    expect(result.code).toBe(125)
    return result.stderr
  }

  it('without the mount namespace of --pid-ns', async () => {
    const w = workspace()
    expect(await refused(['--ro-over', join(w, '.git')])).toBe(
      'toolvisor-landlock: --ro-over: needs the mount namespace of --pid-ns\n',
    )
  })

  it('a relative path, a missing one, a FIFO (opened without blocking), a link as the last component', async () => {
    const w = workspace()
    spawnSync('mkfifo', [join(w, 'fifo')])
    symlinkSync(join(w, '.git'), join(w, 'link'))
    expect(await refused(['--pid-ns', '--ro-over', '.git'])).toBe(
      'toolvisor-landlock: --ro-over .git: not an absolute path\n',
    )
    expect(await refused(['--pid-ns', '--ro-over', join(w, 'missing')])).toBe(
      `toolvisor-landlock: --ro-over ${join(w, 'missing')}: No such file or directory\n`,
    )
    expect(await refused(['--pid-ns', '--ro-over', join(w, 'fifo')])).toBe(
      `toolvisor-landlock: --ro-over ${join(w, 'fifo')}: not a directory or a regular file\n`,
    )
    expect(await refused(['--pid-ns', '--ro-over', join(w, 'link')])).toBe(
      `toolvisor-landlock: --ro-over ${join(w, 'link')}: Too many levels of symbolic links\n`,
    )
  })

  it('--null-over: a missing parent, a planted link (never followed to create its target), no file name', async () => {
    const w = workspace()
    const target = join(tempDir(), 'created-through-the-link')
    symlinkSync(target, join(w, '.envrc'))
    expect(await refused(['--pid-ns', '--null-over', join(w, 'nope', '.envrc')])).toBe(
      `toolvisor-landlock: --null-over ${join(w, 'nope', '.envrc')}: No such file or directory\n`,
    )
    expect(await refused(['--pid-ns', '--null-over', join(w, '.envrc')])).toBe(
      `toolvisor-landlock: --null-over ${join(w, '.envrc')}: Too many levels of symbolic links\n`,
    )
    expect(existsSync(target)).toBe(false)
    expect(await refused(['--pid-ns', '--null-over', `${w}/gone/..`])).toBe(
      `toolvisor-landlock: --null-over ${w}/gone/..: not an absolute path to a file\n`,
    )
  })
})

describe('--null-over where PATH exists by the time the tool starts', () => {
  it('protects what is there (read-only, content kept) instead of replacing it', async () => {
    const w = workspace()
    writeFileSync(join(w, '.envrc'), 'export A=1\n')
    const tool = probeTool()
    const result = await run({
      file: builtLauncher,
      args: [
        ...base,
        '--ro',
        tool.dir,
        '--rw',
        w,
        '--pid-ns',
        '--null-over',
        join(w, '.envrc'),
        '--',
        tool.file,
        JSON.stringify([
          ['read', 'read', join(w, '.envrc')],
          ['write', 'write', join(w, '.envrc'), 'echo armed'],
        ]),
      ],
      env: { PATH: '/usr/bin:/bin' },
      cwd: '/',
      extraFds: [filterFd],
    })
    expect(JSON.parse(result.stdout)).toEqual({ read: 'export A=1\n', write: 'EROFS' })
    expect(readFileSync(join(w, '.envrc'), 'utf8')).toBe('export A=1\n')
  })
})

describe('a directory between the write grant and a protected path', () => {
  it('cannot be renamed or removed to build a new one around the protection (EBUSY)', async () => {
    const w = workspace()
    const tool = probeTool()
    const result = await run({
      file: builtLauncher,
      args: [
        ...base,
        '--ro',
        tool.dir,
        '--rw',
        w,
        ...overs(w),
        '--',
        tool.file,
        JSON.stringify([
          // The attacker's move: .git aside, a fresh .git/hooks in its place, armed.
          ['aside', 'rename', join(w, '.git'), join(w, '.git-old')],
          ['armed', 'write', join(w, '.git', 'hooks', 'pre-commit'), '#!/bin/sh\necho armed\n'],
          ['config', 'write', join(w, '.git', 'config'), '[core]\n'],
        ]),
      ],
      env: { PATH: '/usr/bin:/bin' },
      cwd: '/',
      extraFds: [filterFd],
    })
    expect(result.stderr).toBe('')
    expect(JSON.parse(result.stdout)).toEqual({ aside: 'EBUSY', armed: 'EROFS', config: 'ok' })
    expect(existsSync(join(w, '.git-old'))).toBe(false)
    expect(existsSync(join(w, '.git', 'hooks', 'pre-commit'))).toBe(false)
  })

  it('also when the write grant is a descriptor, as the runtime passes it (--rw-fd)', async () => {
    const w = workspace()
    const result = await run({
      file: '/bin/sh',
      args: [
        '-c',
        `exec 7<${w}; exec "${builtLauncher}" "$@"`,
        'sh',
        ...base,
        '--rw-fd',
        '7',
        ...overs(w),
        '--',
        '/bin/sh',
        '-c',
        `mv ${join(w, '.git')} ${join(w, '.git-old')} 2>&1; rmdir ${join(w, '.git')} 2>&1; echo end`,
      ],
      env: { PATH: '/usr/bin:/bin' },
      cwd: '/',
      extraFds: [filterFd],
    })
    expect(result.stdout).toBe(
      `mv: cannot move '${join(w, '.git')}' to '${join(w, '.git-old')}': Device or resource busy\n` +
        `rmdir: failed to remove '${join(w, '.git')}': Device or resource busy\nend\n`,
    )
  })
})

describe.skipIf(!hasPython)('the tool cannot undo the protection (needs /usr/bin/python3)', () => {
  /** umount2 and a read-write remount of the protected path and of the fresh /proc, after unshare. */
  const undo = `import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)
def call(name, *args):
    result = getattr(libc, name)(*args)
    return "ok" if result == 0 else errno.errorcode[ctypes.get_errno()]
out = {"unshare": call("unshare", 0x10000000 | 0x00020000)}  # CLONE_NEWUSER | CLONE_NEWNS: every capability there
hooks = sys.argv[1].encode()
out["umount"] = call("umount2", hooks, 2)  # MNT_DETACH
out["remount"] = call("mount", None, hooks, None, 32 | 4096, None)  # MS_REMOUNT | MS_BIND, without MS_RDONLY
out["proc"] = call("umount2", b"/proc", 2)
try:
    open(os.path.join(sys.argv[1], "pre-commit"), "w")
    out["write"] = "ok"
except OSError as e:
    out["write"] = errno.errorcode[e.errno]
print(out)
`

  /**
   * `program`: the filter given (default the allowlist); `ALLOW_ALL` shows the mounts hold even
   * were the filter to let the tool make a user namespace (it refuses that: F11).
   */
  function attempt(w: string, asUser?: TestUser, program?: Uint8Array) {
    const dir = tempDir()
    const script = join(dir, 'undo.py')
    writeFileSync(script, undo)
    let launcher = builtLauncher
    if (asUser !== undefined) {
      launcher = join(tempDir(), 'landlock-launcher')
      copyFileSync(builtLauncher, launcher)
      chmodSync(launcher, 0o755)
    }
    const args = [
      ...base,
      '--ro',
      dir,
      '--rw',
      w,
      ...overs(w),
      '--',
      '/usr/bin/python3',
      script,
      join(w, '.git', 'hooks'),
    ]
    const result = spawnSync(launcher, args, {
      encoding: 'utf8',
      cwd: '/',
      env: { PATH: '/usr/bin:/bin' },
      stdio: filterStdio('pipe', program),
      ...(asUser === undefined ? {} : { uid: asUser.uid, gid: asUser.gid }),
    })
    expect(result.stderr).toBe('')
    return result.stdout.trim()
  }

  it('as root (the tool as root, no capability): umount and a read-write remount are refused', () => {
    const w = workspace()
    expect(attempt(w)).toMatch(
      /^\{'unshare': '\w+', 'umount': 'E\w+', 'remount': 'E\w+', 'proc': 'E\w+', 'write': 'EROFS'\}$/,
    )
    expect(existsSync(join(w, '.git', 'hooks', 'pre-commit'))).toBe(false)
  })

  it.skipIf(!isRoot)(
    'as an ordinary user, even in a user namespace of its own: the mounts are locked, and Landlock refuses mount changes (needs root to make the user)',
    () => {
      const u = user!
      const w = workspace(u)
      expect(attempt(w, u)).toBe(
        "{'unshare': 'EPERM', 'umount': 'EPERM', 'remount': 'EPERM', 'proc': 'EPERM', 'write': 'EROFS'}",
      )
      expect(attempt(workspace(u), u, ALLOW_ALL)).toBe(
        "{'unshare': 'ok', 'umount': 'EINVAL', 'remount': 'EPERM', 'proc': 'EINVAL', 'write': 'EROFS'}",
      )
      expect(existsSync(join(w, '.git', 'hooks', 'pre-commit'))).toBe(false)
    },
  )
})
