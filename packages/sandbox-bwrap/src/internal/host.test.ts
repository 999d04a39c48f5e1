import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { hostLayout } from './host.js'

describe('hostLayout', () => {
  const root = mkdtempSync(join(tmpdir(), 'tvbw-layout-'))
  afterAll(() => rmSync(root, { recursive: true, force: true }))

  it('mirrors usr-merge links as links and binds real directories; skips what is absent', () => {
    mkdirSync(join(root, 'usr', 'bin'), { recursive: true })
    symlinkSync('usr/bin', join(root, 'bin'))
    symlinkSync('/usr/lib', join(root, 'lib'))
    mkdirSync(join(root, 'sbin'))
    expect(hostLayout(root)).toEqual([
      { path: '/bin', kind: 'symlink', target: 'usr/bin' },
      { path: '/sbin', kind: 'dir' },
      { path: '/lib', kind: 'symlink', target: '/usr/lib' },
    ])
  })

  it('reads this host as readlink does', () => {
    const layout = hostLayout()
    expect(layout.find((entry) => entry.path === '/bin')).toBeDefined()
  })
})
