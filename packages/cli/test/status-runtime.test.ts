// A handle's status carries "the runtime it was started with, resolved (which user, which
// envdir)" (spec §2.3; issue 28, audit point 9): over `toolvisor mcp` with the SDK client, a
// service under bwrap, an envdir and (as root) the sandbox user, and an unsandboxed one.
import { randomUUID } from 'node:crypto'
import { chmodSync, mkdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { userInfo } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { sandboxUserDir } from '@toolvisor/process-runtime/testing'
import { afterEach, describe, expect, it } from 'vitest'
import { bin, eventually, tagged, tempDir } from './helpers.js'
import { hasBwrap, isRoot } from './sandbox-helpers.js'

const closing: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close()
})

/** A toolbox with one service that only waits, declaring an envdir and, when asked, a sandbox. */
function toolbox(sandboxed: boolean): string {
  // Where the sandbox user can read it: bwrap's private /tmp would hide a box under /tmp.
  const box = sandboxUserDir(import.meta.dirname, 'status-box')
  closing.push(async () => rmSync(box, { recursive: true, force: true }))
  const runtime = {
    envdir: 'svc',
    ...(sandboxed ? { sandbox: { fs: { read: [], write: [] }, net: 'none' } } : {}),
  }
  const doc = {
    protocol: 2,
    slug: 'idle_svc',
    description: 'Waits.',
    args: [],
    process: { mode: 'service' },
    runtime,
  }
  const tool = join(box, 'idle-svc')
  writeFileSync(
    tool,
    `#!/bin/sh\ncase "$1" in\ndescribe) echo '${JSON.stringify(doc)}' ;;\nrun) exec sleep 300 ;;\nesac\n`,
  )
  chmodSync(tool, 0o755)
  return box
}

/** An envdir root (mode 0700) holding the tool's envdir `svc`. */
function envdirRoot(): string {
  const root = tempDir('tv-status-env-')
  chmodSync(root, 0o700)
  mkdirSync(join(root, 'svc'), { mode: 0o700 })
  writeFileSync(join(root, 'svc', 'TOKEN'), 'not-shown\n', { mode: 0o600 })
  return root
}

async function statusOf(args: string[]): Promise<Record<string, unknown>> {
  const tag = randomUUID()
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin, 'mcp', ...args, '--state-dir', tempDir('tv-status-state-')],
    env: { ...(process.env as Record<string, string>), TV_TEST_TAG: tag },
    stderr: 'pipe',
  })
  const client = new Client({ name: 'status-runtime', version: '0.0.0' })
  await client.connect(transport)
  closing.push(async () => {
    await client.close()
    expect(await eventually(() => tagged(tag).length === 0), 'processes left').toBe(true)
  })
  const text = async (name: string, args: Record<string, unknown>) =>
    ((await client.callTool({ name, arguments: args })).content as Array<{ text: string }>)[0]!.text
  expect(JSON.parse(await text('idle_svc', {}))).toMatchObject({ process: 'p1', status: 'running' })
  return JSON.parse(await text('processes', { command: 'status', process: 'p1' }))
}

describe('processes status: the runtime a handle was started with, resolved', () => {
  it('unsandboxed: toolvisor’s own user, the working directory, the envdir, the limits', async () => {
    const root = envdirRoot()
    const status = await statusOf(['--toolbox', toolbox(false), '--envdir-root', root])
    const me = userInfo()
    expect(status.runtime).toEqual({
      user: { name: me.username, uid: me.uid, gid: me.gid },
      cwd: process.cwd(),
      envdir: join(realpathSync(root), 'svc'),
      limits: expect.objectContaining({ pids: expect.any(Number) }),
    })
    // The secret itself is never shown, only where it comes from.
    expect(JSON.stringify(status)).not.toContain('not-shown')
  })

  it.skipIf(!hasBwrap || !isRoot)(
    'under bwrap as root: the sandbox user, the mechanism and its grants (root only: no sandbox user otherwise)',
    async () => {
      const root = envdirRoot()
      const status = await statusOf(['--toolbox', toolbox(true), '--envdir-root', root, '--sandbox', 'bwrap'])
      expect(status.runtime).toMatchObject({
        user: { name: 'nobody' },
        envdir: join(realpathSync(root), 'svc'),
        sandbox: { mechanism: 'bwrap', write: [], net: 'none' },
      })
    },
  )
})
