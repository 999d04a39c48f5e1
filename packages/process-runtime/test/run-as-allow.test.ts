/** Decision 0092: a tool's own run_as is honoured only for the users the operator lists (runAsAllow). */
import { chmodSync, copyFileSync } from 'node:fs'
import { join } from 'node:path'
import type { RuntimeSpec } from '@toolvisor/describe-v2'
import { LoadingError } from '@toolvisor/describe-v2'
import { describe, expect, it } from 'vitest'
import { createLaunchers, type RuntimeOptions, setprivRunAs } from '../src/index.js'
import { fixture, makeRuntime, output, processSpec, runtimeSpec, tempDir } from './helpers.js'

const isRoot = process.geteuid?.() === 0

function runtimeWith(options: Partial<RuntimeOptions>) {
  const launchers = createLaunchers()
  launchers.registerRunAs(setprivRunAs())
  return makeRuntime({ runAs: 'setpriv', ...options }, launchers)
}

function declaring(runtime: Partial<RuntimeSpec>) {
  const dir = tempDir('tv-tool-')
  chmodSync(dir, 0o755)
  const path = join(dir, 'report.mjs')
  copyFileSync(fixture('report.mjs'), path)
  chmodSync(path, 0o755)
  return {
    path,
    dir,
    slug: 'report',
    process: processSpec({ output: output('chunks') }),
    runtime: runtimeSpec(runtime),
  }
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  )
  expect(LoadingError.is(error), String(error)).toBe(true)
  expect(error).toMatchObject({ code: 'RUNTIME_ERR_RUN_AS_NOT_ALLOWED', field: '$.runtime.run_as' })
  return (error as LoadingError).reason
}

describe('runAsAllow (decision 0092)', () => {
  it('refuses every run_as when it lists nobody, and a user it does not list, naming the list and the fix', async () => {
    expect(await refusal(runtimeWith({}).prepare(declaring({ runAs: { user: 'nobody' } })))).toBe(
      'the tool asks to run as "nobody", a user the operator does not allow (runAsAllow: none): add it to runAsAllow (--run-as-allow nobody) to allow it',
    )
    const listed = runtimeWith({ runAsAllow: ['builder', 'daemon'] })
    expect(await refusal(listed.prepare(declaring({ runAs: { user: 'nobody' } })))).toBe(
      'the tool asks to run as "nobody", a user the operator does not allow (runAsAllow: builder, daemon): add it to runAsAllow (--run-as-allow nobody) to allow it',
    )
  })

  it('"*" never covers uid 0, whatever the name it is asked by', async () => {
    const runtime = runtimeWith({ runAsAllow: ['*'] })
    for (const user of ['root', '0']) {
      expect(await refusal(runtime.prepare(declaring({ runAs: { user } })))).toBe(
        `the tool asks to run as "${user}" (uid 0): "*" in runAsAllow allows any user but root; add "${user}" itself to runAsAllow (--run-as-allow ${user}) to allow it`,
      )
    }
  })

  it('refuses a group the user does not belong to: a group is a grant as much as a user is', async () => {
    const runtime = runtimeWith({ runAsAllow: ['nobody'] })
    expect(await refusal(runtime.prepare(declaring({ runAs: { user: 'nobody', group: 'root' } })))).toBe(
      'the tool asks for the group "root", which "nobody" does not belong to: add the user to it (usermod -aG root nobody), or drop run_as.group from the tool',
    )
  })

  it.skipIf(!isRoot)(
    "lets a listed user through, and leaves the operator's own processes alone (needs root to switch)",
    async () => {
      const runtime = runtimeWith({ runAsAllow: ['nobody'] })
      const tool = await runtime.prepare(declaring({ runAs: { user: 'nobody' } }))
      expect(tool.runAs?.target).toEqual({ user: 'nobody' })
      // preparePlain: the operator chose the user; no allowlist applies.
      const plain = await runtimeWith({}).preparePlain({
        name: 'sh',
        file: '/bin/sh',
        runAs: { user: 'root' },
      })
      expect(plain.runAs?.target).toEqual({ user: 'root' })
    },
  )
})
