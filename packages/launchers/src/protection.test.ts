import { existsSync, mkdtempSync, rmSync, type Stats, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { SandboxPolicy } from './launchers.js'
import { mayCreateIn, Placeholders, protectedTargets } from './protection.js'

/** A fake lstat answer: a directory or file with these ids and mode, or a link. */
const entry = (kind: 'dir' | 'file' | 'link' | 'fifo', mode = 0o755, uid = 1000, gid = 1000): Stats =>
  ({
    isDirectory: () => kind === 'dir',
    isFile: () => kind === 'file',
    isSymbolicLink: () => kind === 'link',
    isFIFO: () => kind === 'fifo',
    isSocket: () => false,
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
  it('pins what is there, masks what is missing (a directory or a file)', () => {
    const host: Record<string, Stats> = {
      '/w': entry('dir'),
      '/w/.git': entry('dir'),
      '/w/.git/hooks': entry('dir'),
      '/w/.git/config': entry('file', 0o644),
      '/w/.bashrc': entry('file', 0o644),
    }
    const targets = protectedTargets(policy(), new Map(), (path) => host[path])
    expect(targets.map((t) => [t.path, t.state, t.kind])).toEqual([
      ['/w/.git/hooks', 'there', 'dir'],
      ['/w/.git/config', 'there', 'file'],
      ['/w/.envrc', 'missing', 'file'],
      ['/w/.vscode', 'missing', 'dir'],
      ['/w/.bashrc', 'there', 'file'],
    ])
    expect(targets[0]?.pin).toEqual({
      identity: '8:42',
      field: 'the protected path .git/hooks/ of $.runtime.sandbox.fs.write[0]',
    })
  })

  it("keeps a worktree's .git file (it names the hooks' directory); refuses a link or a FIFO, starting nothing", () => {
    const worktree: Record<string, Stats> = { '/w': entry('dir'), '/w/.git': entry('file', 0o644) }
    expect(
      protectedTargets(
        policy({ protect: ['.git/hooks/', '.git/config'] }),
        new Map(),
        (path) => worktree[path],
      ).map((t) => [t.path, t.state, t.kind]),
    ).toEqual([['/w/.git', 'there', 'file']])
    for (const kind of ['link', 'fifo'] as const) {
      const host: Record<string, Stats> = { '/w': entry('dir'), '/w/.bashrc': entry(kind) }
      expect(() =>
        protectedTargets(policy({ protect: ['.bashrc'] }), new Map(), (path) => host[path]),
      ).toThrow(
        expect.objectContaining({
          code: 'RUNTIME_ERR_PROTECTED_PATH',
          message: `the protected path .bashrc of $.runtime.sandbox.fs.write[0] is ${kind === 'link' ? 'a symbolic link' : 'a FIFO'} (/w/.bashrc), which a sandbox cannot keep from being replaced by something that runs later: remove it, or point it at a real file; nothing was started`,
        }),
      )
    }
  })

  it('masks the first missing part (.git for .git/hooks/), once; nothing the user cannot create', () => {
    const mine: Record<string, Stats> = { '/w': entry('dir') }
    expect(protectedTargets(policy(), new Map(), (path) => mine[path]).map((p) => p.path)).toEqual([
      '/w/.git',
      '/w/.envrc',
      '/w/.vscode',
      '/w/.bashrc',
    ])
    const rootOwned: Record<string, Stats> = { '/w': entry('dir', 0o755, 0, 0) }
    expect(protectedTargets(policy(), new Map(), (path) => rootOwned[path])).toEqual([])
  })

  it("masks again what another run's placeholder holds, rather than binding it", () => {
    const host: Record<string, Stats> = { '/w': entry('dir'), '/w/.envrc': entry('file', 0o600) }
    const ours = new Map([['/w/.envrc', 1]])
    const found = protectedTargets(policy({ protect: ['.envrc'] }), ours, (path) => host[path])
    expect(found.map((t) => t.state)).toEqual(['missing'])
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

  it('Placeholders: the last release of a shared placeholder runs the release it was given, once', () => {
    const placeholders = new Placeholders()
    let before = 0
    const target = { path: '/nonexistent/tv-placeholder', state: 'missing', kind: 'file' } as const
    const first = placeholders.hold([target], () => before++).release
    const second = placeholders.hold([target]).release
    expect(placeholders.held.get(target.path)).toBe(2)
    first?.()
    first?.()
    expect(placeholders.held.get(target.path)).toBe(1)
    expect(before).toBe(1)
    second?.()
    expect(placeholders.held.has(target.path)).toBe(false)
    expect(placeholders.hold([{ ...target, state: 'there' }])).toEqual({})
    expect(placeholders.hold([target]).placeholders).toEqual([{ path: target.path, kind: 'file' }])
  })

  it('Placeholders.again: one an earlier runtime made is counted with the launches, removed at the last release only', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tv-placeholder-'))
    const path = join(dir, '.envrc')
    writeFileSync(path, '')
    const placeholders = new Placeholders()
    const adopted = placeholders.again([{ path, kind: 'file' }])
    const launch = placeholders.hold([{ path, state: 'missing', kind: 'file' }]).release
    adopted()
    adopted()
    expect(existsSync(path)).toBe(true)
    launch?.()
    expect(existsSync(path)).toBe(false)
    rmSync(dir, { recursive: true })
  })
})
