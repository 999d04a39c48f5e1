import { execFileSync } from 'node:child_process'
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import {
  lookupAccount,
  missingAccess,
  refuseUnlistedRunAs,
  runuserRunAs,
  selfAccount,
  setprivRunAs,
} from '../src/index.js'

const isRoot = process.geteuid?.() === 0
const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** A refusal that throws what it was given, as the runtime's `fail` does. */
function refusal(code: string, field: string, reason: string): never {
  throw new Error(`${code} ${field}: ${reason}`)
}

describe('accounts', () => {
  it('looks a user up in the host database, and says which part is missing', async () => {
    const nobody = await lookupAccount('nobody')
    expect(nobody).toMatchObject({
      name: 'nobody',
      uid: Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' })),
    })
    expect(await lookupAccount('tv-no-such-user-4711')).toEqual({ missing: 'user' })
    expect(await lookupAccount('nobody', 'tv-no-such-group-4711')).toEqual({ missing: 'group' })
    expect(selfAccount().uid).toBe(process.geteuid?.())
  })

  it.skipIf(!isRoot)(
    'asks the kernel what another user may reach (root here, since only root can switch)',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'tv-run-as-'))
      dirs.push(dir)
      chmodSync(dir, 0o700)
      const nobody = await lookupAccount('nobody')
      if ('missing' in nobody) throw new Error('no nobody here')
      const needs = [
        { path: dir, mode: 'rx' },
        { path: '/usr/bin', mode: 'rx' },
      ]
      expect(await missingAccess(nobody, needs)).toEqual([{ path: dir, mode: 'rx' }])
      expect(await missingAccess(selfAccount(), needs)).toEqual([])
    },
  )
})

describe("the operator's allow list", () => {
  it('refuses a user it does not list, root under "*", and a group the user is not in; names the fix', async () => {
    await expect(refuseUnlistedRunAs({ user: 'nobody' }, [], refusal)).rejects.toThrow(
      'RUNTIME_ERR_RUN_AS_NOT_ALLOWED $.runtime.run_as: the tool asks to run as "nobody", a user the operator does not allow (runAsAllow: none): add it to runAsAllow (--run-as-allow nobody) to allow it',
    )
    await expect(refuseUnlistedRunAs({ user: 'root' }, ['*'], refusal)).rejects.toThrow('(uid 0)')
    await expect(refuseUnlistedRunAs({ user: 'nobody', group: 'root' }, ['*'], refusal)).rejects.toThrow(
      'the tool asks for the group "root", which "nobody" does not belong to',
    )
    await expect(refuseUnlistedRunAs({ user: 'nobody' }, ['*'], refusal)).resolves.toBeUndefined()
    await expect(refuseUnlistedRunAs({ user: 'root' }, ['root'], refusal)).resolves.toBeUndefined()
  })
})

describe('run_as mechanisms', () => {
  it("run setpriv by its absolute path, so a tool's PATH cannot choose what runs as root; the group is the user's primary one", async () => {
    const setpriv = setprivRunAs()
    await setpriv.qualify({ user: 'nobody' })
    const launch = setpriv.wrap(
      { file: '/t/tool', args: ['run'], env: { PATH: '/evil' }, cwd: '/', extraFds: [] },
      { user: 'nobody' },
    )
    const gid = execFileSync('id', ['-g', 'nobody'], { encoding: 'utf8' }).trim()
    expect(launch.file).toBe('/usr/bin/setpriv')
    expect(launch.args).toEqual([
      '--reuid',
      'nobody',
      '--regid',
      gid,
      '--init-groups',
      '--',
      '/t/tool',
      'run',
    ])
  })
})

describe('the run_as mechanisms, run', () => {
  it.skipIf(!isRoot)(
    'setpriv and runuser each run the launch as the user, with the group asked for',
    async () => {
      for (const mechanism of [setprivRunAs(), runuserRunAs()]) {
        expect(await mechanism.qualify({ user: 'nobody' })).toEqual({ ok: true })
        const launch = mechanism.wrap(
          { file: '/usr/bin/id', args: [], env: {}, cwd: '/', extraFds: [] },
          { user: 'nobody', group: 'nogroup' },
        )
        const out = execFileSync(launch.file, launch.args, { encoding: 'utf8' })
        expect(out, mechanism.name).toMatch(/^uid=\d+\(nobody\) gid=\d+\(nogroup\)/)
      }
    },
  )

  it('refuses at qualify a user that does not exist, naming the field and the fix', async () => {
    expect(await setprivRunAs().qualify({ user: 'tv-no-such-user-4711' })).toEqual({
      ok: false,
      field: 'run_as',
      reason: 'no such user "tv-no-such-user-4711"',
      fix: 'create the user or fix run_as.user',
    })
  })
})
