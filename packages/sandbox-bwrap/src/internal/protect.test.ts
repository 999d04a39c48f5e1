import { describe, expect, it } from 'vitest'
import { protectMounts } from './protect.js'

describe('protectMounts (decision 0096)', () => {
  it('binds what is there from its pinned descriptor; masks a missing directory with a read-only tmpfs and a file with empty data', () => {
    const pin = { identity: '8:42', field: 'the protected path .git/hooks/ of $.runtime.sandbox.fs.write[0]' }
    const mounts = protectMounts([
      { path: '/w/.git/hooks', state: 'there', kind: 'dir', pin },
      { path: '/w/.vscode', state: 'missing', kind: 'dir' },
      { path: '/w/.envrc', state: 'missing', kind: 'file' },
    ])
    expect(mounts).toEqual([
      {
        path: '/w/.git/hooks',
        args: [],
        host: true,
        from: { flag: '--ro-bind-fd', fd: { kind: 'file', path: '/w/.git/hooks', pin } },
      },
      {
        path: '/w/.vscode',
        args: ['--perms', '0555', '--tmpfs', '/w/.vscode', '--remount-ro', '/w/.vscode'],
        host: false,
      },
      {
        path: '/w/.envrc',
        args: [],
        host: false,
        from: { flag: '--ro-bind-data', fd: { kind: 'data', data: new Uint8Array(0) } },
      },
    ])
  })
})
