import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { bwrapMechanism } from '../src/index.js'
import { cleanup, installProbe, launchOf, policy, run, toolDir } from './helpers.js'

const bwrap = bwrapMechanism()
const tag = `${process.pid}-${Date.now()}`
const hostMarker = `/tmp/tvbw-marker-${tag}`
const varMarker = `/var/tmp/tvbw-marker-${tag}`
const toolFile = `/tmp/tvbw-tool-${tag}`
const shmFile = `/dev/shm/tvbw-tool-${tag}`
let root: string
let tool: string
let probe: string

beforeAll(() => {
  root = toolDir('tvbw-tmp-')
  tool = join(root, 'tool')
  mkdirSync(tool)
  probe = installProbe(tool)
  writeFileSync(hostMarker, 'host\n')
  writeFileSync(varMarker, 'host\n')
})
afterEach(async () => {
  expect(await cleanup()).toEqual([])
  rmSync(toolFile, { force: true })
  rmSync(shmFile, { force: true })
})
afterAll(() => {
  for (const path of [root, hostMarker, varMarker]) rmSync(path, { recursive: true, force: true })
})

const ops = [
  `read:${hostMarker}`,
  `read:${varMarker}`,
  `write:${toolFile}:from-tool`,
  `read:${toolFile}`,
  `write:${shmFile}:x`,
]

describe('tmp: private', () => {
  it('hides the host /tmp and /var/tmp; what the tool writes there is gone from the host afterwards', async () => {
    const result = await run(
      bwrap.wrap(launchOf(probe, ops, tool), policy(tool, probe, { tmp: 'private' }), undefined),
      bwrap,
    )
    expect(result.code).toBe(0)
    expect(result.probe(`read:${hostMarker}`)).toMatchObject({ ok: false, errno: 'ENOENT' })
    expect(result.probe(`read:${varMarker}`)).toMatchObject({ ok: false, errno: 'ENOENT' })
    expect(result.probe(`write:${toolFile}:from-tool`)).toMatchObject({ ok: true })
    expect(result.probe(`read:${toolFile}`)).toMatchObject({ ok: true, value: 'from-tool' })
    expect(result.probe(`write:${shmFile}:x`)).toMatchObject({ ok: true })
    expect(existsSync(toolFile)).toBe(false)
    expect(existsSync(shmFile)).toBe(false)
  })

  it('stays private under a grant of a parent: fs.read /var keeps /var/tmp private, fs.read / keeps /tmp, /dev, /proc', async () => {
    const underVar = await run(
      bwrap.wrap(
        launchOf(probe, [`read:${varMarker}`, 'ls:/var/tmp', 'stat:/var/lib'], tool),
        policy(tool, probe, { read: ['/var'] }),
        undefined,
      ),
      bwrap,
    )
    expect(underVar.probe(`read:${varMarker}`)).toMatchObject({ ok: false, errno: 'ENOENT' })
    expect(underVar.probe('ls:/var/tmp')).toMatchObject({ ok: true, value: [] })
    expect(underVar.probe('stat:/var/lib')).toMatchObject({ ok: true })
    const hostDevices = readdirSync('/dev').filter((name) => /^(vd|sd|nvme|xvd)/.test(name))
    const ops = [`read:${hostMarker}`, 'ls:/dev', 'status:Pid', `read:${root}/tool/probe`]
    const underRoot = await run(
      bwrap.wrap(launchOf(probe, ops, tool), policy(tool, probe, { read: ['/'] }), undefined),
      bwrap,
    )
    expect(underRoot.probe(`read:${hostMarker}`)).toMatchObject({ ok: false, errno: 'ENOENT' })
    const devices = underRoot.probe('ls:/dev')?.value as string[]
    expect(devices).toContain('null')
    for (const device of hostDevices) expect(devices).not.toContain(device)
    expect(underRoot.probe('status:Pid')).toMatchObject({ value: '2' }) // the sandbox's own /proc
    expect(underRoot.probe(`read:${root}/tool/probe`)).toMatchObject({ ok: true })
  })

  it('still shows a grant below /tmp (the grant is mounted after the tmpfs)', async () => {
    const wrapped = bwrap.wrap(
      launchOf(probe, ['ls:/tmp', `ls:${root}`], tool),
      policy(tool, probe),
      undefined,
    )
    const result = await run(wrapped, bwrap)
    expect(result.probe('ls:/tmp')).toMatchObject({ ok: true, value: [root.split('/')[2]] })
    expect(result.probe(`ls:${root}`)).toMatchObject({ ok: true, value: ['tool'] })
  })
})

describe('tmp: shared', () => {
  it('shows the host /tmp, and what the tool writes there appears on the host', async () => {
    const result = await run(
      bwrap.wrap(launchOf(probe, ops, tool), policy(tool, probe, { tmp: 'shared' }), undefined),
      bwrap,
    )
    expect(result.code).toBe(0)
    expect(result.probe(`read:${hostMarker}`)).toMatchObject({ ok: true, value: 'host\n' })
    expect(result.probe(`write:${toolFile}:from-tool`)).toMatchObject({ ok: true })
    expect(readFileSync(toolFile, 'utf8')).toBe('from-tool')
    // /var/tmp is not part of tmp: shared, and /dev/shm stays private with the IPC namespace
    expect(result.probe(`read:${varMarker}`)).toMatchObject({ ok: false, errno: 'ENOENT' })
    expect(existsSync(shmFile)).toBe(false)
  })
})
