/**
 * F9 of the 2026-12-01 review (its run_as half), as the report ran it: a tool's own
 * `run_as: {"user":"root"}` was obeyed as soon as `--run-as setpriv` was configured. Under bwrap
 * the tool was uid 0; under Landlock it set the setuid bit on a host binary outside its grants.
 * Now a tool's run_as is honoured only for users the operator lists (`runAsAllow`), root only by
 * its name.
 */
import { chmodSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { dir, hasBwrap, isRoot, load, mechanisms, sandboxedTool } from './sandbox-helpers.js'

const notAllowed = (user: string, listed: string) =>
  `the tool asks to run as "${user}", a user the operator does not allow (runAsAllow: ${listed}): add it to runAsAllow (--run-as-allow ${user}) to allow it`

describe.skipIf(!isRoot || !hasBwrap)('F9: a tool that declares run_as root (root, --run-as setpriv)', () => {
  for (const mechanism of mechanisms) {
    describe(mechanism, () => {
      it('does not load without an allowlist: it never runs as uid 0, nor sets a setuid bit outside its grants', async () => {
        const box = dir('tv-f9-box-')
        const host = dir('tv-f9-host-') // root's 0755: outside every grant
        const rbin = join(host, 'rbin')
        writeFileSync(rbin, '#!/bin/sh\n')
        chmodSync(rbin, 0o755)
        const tool = sandboxedTool(box, 'rooty', {
          run_as: { user: 'root' },
          sandbox: { fs: { read: ['.'] } },
        })
        const { tools, call } = await load(box, { sandbox: mechanism, runAs: 'setpriv' })
        if (tools.list().some((t) => t.name === 'rooty')) {
          expect((await call('rooty', 'id -u')).text).not.toBe('0\n')
          await call('rooty', `chmod 4755 ${rbin}`)
          expect(statSync(rbin).mode & 0o7777).toBe(0o755)
        }
        expect(tools.list().map((t) => t.name)).toEqual(['processes'])
        const [report] = tools.loadErrors()
        expect(report).toMatchObject({
          code: 'RUNTIME_ERR_RUN_AS_NOT_ALLOWED',
          field: '$.runtime.run_as',
          message: `${tool}: $.runtime.run_as: ${notAllowed('root', 'none')}`,
        })
        expect(statSync(rbin).mode & 0o7777).toBe(0o755)
      })

      it('loads and runs as root when runAsAllow lists root by name', async () => {
        const box = dir('tv-f9-box-')
        sandboxedTool(box, 'rooty', { run_as: { user: 'root' }, sandbox: { fs: { read: ['.'] } } })
        const { call } = await load(box, { sandbox: mechanism, runAs: 'setpriv', runAsAllow: ['root'] })
        expect(await call('rooty', 'id -u')).toEqual({ isError: false, text: '0\n' })
      })

      it('"*" allows any user but root: nobody loads, root does not', async () => {
        const box = dir('tv-f9-box-')
        sandboxedTool(box, 'lowly', { run_as: { user: 'nobody' }, sandbox: { fs: { read: ['.'] } } })
        const rooty = sandboxedTool(box, 'rooty', {
          run_as: { user: 'root' },
          sandbox: { fs: { read: ['.'] } },
        })
        const { tools, call } = await load(box, { sandbox: mechanism, runAs: 'setpriv', runAsAllow: ['*'] })
        expect(await call('lowly', 'id -un')).toEqual({ isError: false, text: 'nobody\n' })
        expect(tools.list().map((t) => t.name)).not.toContain('rooty')
        expect(tools.loadErrors()).toEqual([
          expect.objectContaining({
            code: 'RUNTIME_ERR_RUN_AS_NOT_ALLOWED',
            field: '$.runtime.run_as',
            message: `${rooty}: $.runtime.run_as: the tool asks to run as "root" (uid 0): "*" in runAsAllow allows any user but root; add "root" itself to runAsAllow (--run-as-allow root) to allow it`,
          }),
        ])
      })
    })
  }
})
