import type { Stats } from 'node:fs'
import type { SandboxPolicy } from '@toolvisor/process-runtime'
import { describe, expect, it } from 'vitest'
import { mayCreateIn, protection } from './protect.js'

/** A fake lstat answer: a directory or file with these ids and mode, or a link. */
const entry = (kind: 'dir' | 'file' | 'link', mode = 0o755, uid = 1000, gid = 1000): Stats =>
  ({
    isDirectory: () => kind === 'dir',
    isFile: () => kind === 'file',
    isSymbolicLink: () => kind === 'link',
    mode,
    uid,
    gid,
    dev: 8,
    ino: 42,
    size: 0,
  }) as unknown as Stats

const policy = (over: Partial<SandboxPolicy> = {}): SandboxPolicy => ({
  toolDir: '/usr/bin',
  executable: '/usr/bin/bash',
  read: ['/'],
  write: ['/w'],
  net: 'host',
  tmp: 'none',
  declared: [],
  pins: {},
  protect: ['.git/hooks/', '.git/config', '.envrc', '.vscode/', '.bashrc'],
  user: { uid: 1000, gid: 1000, groups: [1000] },
  ...over,
})

describe('protection (decision 0096)', () => {
  it('binds what is there from a pinned descriptor, masks what is missing, leaves links alone', () => {
    const host: Record<string, Stats> = {
      '/w': entry('dir'),
      '/w/.git': entry('dir'),
      '/w/.git/hooks': entry('dir'),
      '/w/.git/config': entry('file', 0o644),
      '/w/.bashrc': entry('link'),
    }
    const { mounts, placeholders } = protection(policy(), new Map(), (path) => host[path])
    expect(mounts.map((m) => [m.path, m.from?.flag ?? m.args.join(' ')])).toEqual([
      ['/w/.git/hooks', '--ro-bind-fd'],
      ['/w/.git/config', '--ro-bind-fd'],
      ['/w/.envrc', '--ro-bind-data'],
      ['/w/.vscode', '--perms 0555 --tmpfs /w/.vscode --remount-ro /w/.vscode'],
    ])
    expect(mounts[0]?.from?.fd).toEqual({
      kind: 'file',
      path: '/w/.git/hooks',
      pin: { identity: '8:42', field: 'the protected path .git/hooks/ of $.runtime.sandbox.fs.write[0]' },
    })
    expect(placeholders).toEqual([
      { path: '/w/.envrc', kind: 'file' },
      { path: '/w/.vscode', kind: 'dir' },
    ])
  })

  it('masks the first missing part (.git for .git/hooks/), once; nothing the user cannot create', () => {
    const mine: Record<string, Stats> = { '/w': entry('dir') }
    expect(protection(policy(), new Map(), (path) => mine[path]).placeholders.map((p) => p.path)).toEqual([
      '/w/.git',
      '/w/.envrc',
      '/w/.vscode',
      '/w/.bashrc',
    ])
    const rootOwned: Record<string, Stats> = { '/w': entry('dir', 0o755, 0, 0) }
    expect(protection(policy(), new Map(), (path) => rootOwned[path]).mounts).toEqual([])
  })

  it("masks again what another run's placeholder holds, rather than binding it", () => {
    const host: Record<string, Stats> = { '/w': entry('dir'), '/w/.envrc': entry('file', 0o600) }
    const ours = new Map([['/w/.envrc', 1]])
    const found = protection(policy({ protect: ['.envrc'] }), ours, (path) => host[path])
    expect(found.mounts.map((m) => m.from?.flag)).toEqual(['--ro-bind-data'])
  })

  it('mayCreateIn reads the class of the user: owner, group, others; root always', () => {
    const user = { uid: 1000, gid: 1000, groups: [1000, 27] }
    expect(mayCreateIn(entry('dir', 0o700), user)).toBe(true)
    expect(mayCreateIn(entry('dir', 0o500), user)).toBe(false)
    expect(mayCreateIn(entry('dir', 0o770, 0, 27), user)).toBe(true)
    expect(mayCreateIn(entry('dir', 0o755, 0, 0), user)).toBe(false)
    expect(mayCreateIn(entry('dir', 0o1777, 0, 0), user)).toBe(true)
    expect(mayCreateIn(entry('dir', 0o755, 0, 0), { uid: 0, gid: 0, groups: [0] })).toBe(true)
    expect(mayCreateIn(entry('file', 0o777), user)).toBe(false)
  })
})
