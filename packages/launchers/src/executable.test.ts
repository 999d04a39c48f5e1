import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { pinnedExecutable as locate } from './executable.js'

describe('pinnedExecutable', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tv-pinned-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('pins a bare name to the first executable on the runtime PATH, skipping relative entries', () => {
    writeFileSync(join(dir, 'fakebin'), '#!/bin/sh\n')
    writeFileSync(join(dir, 'plain'), 'not executable')
    chmodSync(join(dir, 'fakebin'), 0o755)
    expect(locate('fakebin', `.:relative:${dir}:/usr/bin`)).toBe(join(dir, 'fakebin'))
    expect(locate('plain', dir)).toBe('plain')
    expect(locate('setpriv', '/usr/bin')).toBe('/usr/bin/setpriv')
  })

  it('keeps a path, made absolute', () => {
    expect(locate('/opt/tools/bin/tool', '')).toBe('/opt/tools/bin/tool')
    expect(locate('./bin/tool', '')).toBe(join(process.cwd(), 'bin/tool'))
  })
})
