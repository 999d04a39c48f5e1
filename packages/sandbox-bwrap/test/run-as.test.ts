import { chmodSync, chownSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { RunAsTarget } from '@toolvisor/process-runtime'
import { setprivRunAs } from '@toolvisor/process-runtime'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { bwrapMechanism } from '../src/index.js'
import type { TestUser } from './helpers.js'
import { cleanup, createTestUser, installProbe, isRoot, launchOf, policy, run, toolDir } from './helpers.js'

describe.skipIf(!isRoot)('run_as (skipped unless the suite runs as root: it creates a user)', () => {
  const bwrap = bwrapMechanism()
  const setpriv = setprivRunAs()
  let account: TestUser
  let runAs: RunAsTarget
  let root: string
  let tool: string
  let probe: string
  let readDir: string
  let writeDir: string

  beforeAll(() => {
    account = createTestUser('tvbw')
    runAs = { user: account.user }
    root = toolDir('tvbw-runas-')
    tool = join(root, 'tool')
    mkdirSync(tool)
    probe = installProbe(tool)
    readDir = join(root, 'data')
    mkdirSync(readDir)
    const groupOnly = join(readDir, 'group-only.txt')
    writeFileSync(groupOnly, 'for the group\n')
    chownSync(groupOnly, 0, account.groupId)
    chmodSync(groupOnly, 0o640)
    writeDir = join(root, 'out')
    mkdirSync(writeDir)
    chownSync(writeDir, account.uid, account.gid)
  })
  afterEach(async () => {
    expect(await cleanup()).toEqual([])
  })
  afterAll(() => {
    rmSync(root, { recursive: true, force: true })
    account.remove()
  })

  it('qualifies by running the preflight as the user', async () => {
    const sandbox = policy(tool, probe, { net: 'none' })
    expect(await bwrap.qualify(sandbox, runAs)).toEqual({ ok: true })
    expect(await bwrap.qualify(sandbox, { user: 'tvbw-no-such-user' })).toEqual({
      ok: false,
      field: 'run_as',
      reason: 'no such user "tvbw-no-such-user"',
      fix: 'create the user, or fix runtime.run_as',
    })
  })

  it('runs the tool as the user: its files are the user’s on the host, groups kept, no capability', async () => {
    const ops = [
      'id',
      `write:${writeDir}/made.txt:hi`,
      `read:${readDir}/group-only.txt`,
      'status:CapEff',
      'status:CapBnd',
      'status:NoNewPrivs',
      'write:/usr/x:x',
    ]
    const sandbox = policy(tool, probe, { read: [readDir], write: [writeDir], net: 'none' })
    const launch = setpriv.wrap(bwrap.wrap(launchOf(probe, ops, tool), sandbox, runAs), runAs)
    expect(launch.file).toBe('/usr/bin/setpriv')
    const result = await run(launch, bwrap)
    expect(result.code).toBe(0)
    const id = result.probe('id')?.value as { uid: number; gid: number; groups: number[] }
    expect(id.uid).toBe(account.uid)
    expect(id.gid).toBe(account.gid)
    const made = statSync(join(writeDir, 'made.txt'))
    expect([made.uid, made.gid]).toEqual([account.uid, account.gid])
    expect(result.probe(`read:${readDir}/group-only.txt`)).toMatchObject({
      ok: true,
      value: 'for the group\n',
    })
    expect(result.probe('status:CapEff')).toMatchObject({ value: '0000000000000000' })
    expect(result.probe('status:CapBnd')).toMatchObject({ value: '0000000000000000' })
    expect(result.probe('status:NoNewPrivs')).toMatchObject({ value: '1' })
    expect(result.probe('write:/usr/x:x')).toMatchObject({ ok: false, errno: 'EROFS' })
  })

  it('cannot read a file of a group it is not in (so the groups check above is real)', async () => {
    const other = { user: account.user, group: account.user }
    const sandbox = policy(tool, probe, { read: [readDir] })
    const launch = setpriv.wrap(
      bwrap.wrap(launchOf(probe, [`read:${readDir}/group-only.txt`], tool), sandbox, other),
      other,
    )
    chownSync(join(readDir, 'group-only.txt'), 0, 0)
    try {
      const result = await run(launch, bwrap)
      expect(result.probe(`read:${readDir}/group-only.txt`)).toMatchObject({ ok: false, errno: 'EACCES' })
    } finally {
      chownSync(join(readDir, 'group-only.txt'), 0, account.groupId)
    }
  })
})
