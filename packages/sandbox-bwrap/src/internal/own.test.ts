import type { OwnPath, SandboxPolicy } from '@toolvisor/launchers'
import { describe, expect, it } from 'vitest'
import { mountArgs, mounts } from './args.js'
import type { PathKind } from './own.js'

const policy = (over: Partial<SandboxPolicy>): SandboxPolicy => ({
  toolDir: '/usr/bin',
  executable: '/usr/bin/bash',
  read: [],
  write: [],
  net: 'host',
  tmp: 'none',
  declared: [],
  pins: {},
  ...over,
})
const kinds: Record<string, PathKind> = {
  '/home/u/.local/state/tv': 'dir',
  '/home/u/work/state': 'dir',
  '/home/u/tv.json': 'other',
  '/tmp/tv.sock': 'other',
  '/opt/tv/node_modules/@toolvisor': 'dir',
}
const kindOf = (path: string) => kinds[path]
const state: OwnPath = { path: '/home/u/.local/state/tv', kind: 'secret', what: 'state' }
const numbered = (mount: { path: string }) => (mount.path.length % 10) + 10

/** The arguments of the mounts, grants numbered by a fake descriptor. */
const argsOf = (over: Partial<SandboxPolicy>) => mountArgs(mounts(policy(over), [], kindOf), numbered)

describe('own mounts (decision 0095)', () => {
  it('masks a secret a read grant of / shows: an empty read-only tmpfs, after the grant', () => {
    const args = argsOf({ read: ['/'], own: [state] })
    const at = args.lastIndexOf('--tmpfs')
    expect(args.slice(at - 2, at + 4)).toEqual([
      '--perms',
      '0755',
      '--tmpfs',
      state.path,
      '--remount-ro',
      state.path,
    ])
    expect(args.indexOf('--ro-bind-fd')).toBeLessThan(at)
  })

  it('masks a file or socket with /dev/null, and nothing for what the sandbox does not show from the host', () => {
    const file: OwnPath = { path: '/home/u/tv.json', kind: 'secret', what: 'config' }
    expect(argsOf({ read: ['/'], own: [file] }).join(' ')).toContain('--ro-bind /dev/null /home/u/tv.json')
    // Without a grant above it, the path is not in the sandbox at all.
    expect(argsOf({ read: ['/srv'], own: [state, file] }).join(' ')).not.toContain('/home/u')
    // Missing on the host: nothing to mask, and no mount point made for it.
    const missing: OwnPath = { path: '/home/u/none', kind: 'secret', what: 'x' }
    expect(argsOf({ read: ['/'], own: [missing] }).join(' ')).not.toContain('/home/u/none')
  })

  it('under a writable grant, binds every directory between the grant and the secret onto itself before the mask', () => {
    const inWork: OwnPath = { path: '/home/u/work/state', kind: 'secret', what: 'state' }
    const args = argsOf({ read: ['/'], write: ['/home/u'], own: [inWork] }).join(' ')
    expect(args).toContain('--bind /home/u/work /home/u/work --perms 0755 --tmpfs /home/u/work/state')
  })

  it('keeps the installation read-only under a writable bind, and leaves it alone under a read-only one', () => {
    const code: OwnPath = { path: '/opt/tv/node_modules/@toolvisor', kind: 'code', what: 'installation' }
    expect(argsOf({ write: ['/opt/tv'], own: [code] }).join(' ')).toContain(
      '--bind /opt/tv/node_modules /opt/tv/node_modules --ro-bind /opt/tv/node_modules/@toolvisor /opt/tv/node_modules/@toolvisor',
    )
    expect(argsOf({ read: ['/opt/tv'], own: [code] }).join(' ')).not.toContain('@toolvisor')
  })

  it('a shared /tmp shows the host /tmp: a socket of toolvisor there is masked too', () => {
    const socket: OwnPath = { path: '/tmp/tv.sock', kind: 'secret', what: 'socket' }
    const args = argsOf({ tmp: 'shared', own: [socket] }).join(' ')
    expect(args).toContain('--bind /tmp /tmp')
    expect(args).toContain('--ro-bind /dev/null /tmp/tv.sock')
  })
})
