import { spawn } from 'node:child_process'
import { mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import type { Launch, RunAsTarget } from '@toolvisor/process-runtime'
import { setprivRunAs } from '@toolvisor/process-runtime'
import { eventually } from '@toolvisor/process-runtime/testing'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { bwrapMechanism } from '../src/index.js'
import type { TestUser } from './helpers.js'
import {
  cleanup,
  createTestUser,
  fixture,
  isRoot,
  launchOf,
  MARK,
  marked,
  policy,
  script,
  settle,
  start,
  toolDir,
} from './helpers.js'

const bwrap = bwrapMechanism()
let account: TestUser | undefined
let root: string
let tool: string
let trapper: string

beforeAll(() => {
  if (isRoot) account = createTestUser('tvbw')
  root = toolDir('tvbw-life-')
  tool = join(root, 'tool')
  mkdirSync(tool)
  trapper = script(
    tool,
    'trapper',
    "trap 'echo trapped; exit 7' TERM\necho ready\nwhile :; do sleep 0.05; done",
  )
})
afterEach(async () => {
  expect(await cleanup()).toEqual([])
})
afterAll(() => {
  rmSync(root, { recursive: true, force: true })
  account?.remove()
})

/** The trapper tool wrapped for bwrap, then (for the run_as rows) prefixed with setpriv. */
function trapperLaunch(asUser: boolean): Launch {
  const runAs: RunAsTarget | undefined = asUser && account ? { user: account.user } : undefined
  const wrapped = bwrap.wrap(launchOf(trapper, [], tool), policy(tool, trapper, { net: 'none' }), runAs)
  return runAs === undefined ? wrapped : setprivRunAs().wrap(wrapped, runAs)
}

const callers = [
  { name: 'as the caller', asUser: false, skip: false },
  { name: 'as the run_as user (skipped unless root)', asUser: true, skip: !isRoot },
]

for (const caller of callers) {
  describe.skipIf(caller.skip)(caller.name, () => {
    it('cancel: control().signal(SIGTERM) runs the tool’s TERM trap and its exit code comes back', async () => {
      const proc = start(trapperLaunch(caller.asUser), bwrap)
      await proc.waitFor('ready\n')
      expect(proc.control).toBeDefined()
      // bwrap writes the child pid before it starts the tool; allow the info pipe one more turn
      const deadline = Date.now() + 1000
      while (!proc.control?.signal('SIGTERM')) {
        expect(Date.now()).toBeLessThan(deadline)
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
      expect(await proc.exited).toEqual({ code: 7, signal: null })
      expect(proc.stdout()).toBe('ready\ntrapped\n')
      expect(await settle()).toEqual([])
      // Once the sandbox is gone there is nothing to signal (its pid 1 may take a moment to go
      // under load: wait for that, bounded).
      const gone = Date.now() + 2000
      while (proc.control?.signal('SIGCONT') && Date.now() < gone) await new Promise((r) => setTimeout(r, 10))
      expect(proc.control?.signal('SIGTERM')).toBe(false)
    })

    it('contrast: SIGTERM to bwrap’s own process group kills the tool without its trap running', async () => {
      const proc = start(trapperLaunch(caller.asUser), bwrap)
      await proc.waitFor('ready\n')
      process.kill(-(proc.child.pid as number), 'SIGTERM')
      expect(await proc.exited).toEqual({ code: null, signal: 'SIGTERM' })
      expect(proc.stdout()).toBe('ready\n')
      expect(await settle()).toEqual([])
    })

    it('dies with the runtime: SIGKILL the process that spawned bwrap, no tool process remains after ~1 s', async () => {
      const launch = trapperLaunch(caller.asUser)
      const json = JSON.stringify({
        ...launch,
        extraFds: launch.extraFds.map((fd) =>
          fd.kind === 'data' ? { kind: 'data', data: Buffer.from(fd.data).toString('base64') } : fd,
        ),
      })
      const runtime = spawn(process.execPath, [fixture('intermediate.mjs'), json], {
        env: { ...process.env, [MARK.split('=')[0] as string]: MARK.split('=')[1] as string },
        stdio: ['ignore', 'pipe', 'inherit'],
      })
      await new Promise<void>((resolve) =>
        runtime.stdout.on('data', (chunk: Buffer) => chunk.includes('ready') && resolve()),
      )
      const before = marked()
      expect(before.length).toBeGreaterThanOrEqual(4) // runtime, bwrap, the sandbox's init, the tool (+ its sleep)
      runtime.kill('SIGKILL')
      // Gone within a second: the watchdog's promise.
      expect(await eventually(() => marked().length === 0, 1000)).toBe(true)
    })
  })
}
