// A bash escalation from a 2026-07-28 client of `toolvisor mcp` (issue 30, decision 0109): that
// revision asks the user by an `input_required` round, which is not served yet, so the ask must
// fail closed. The client declares elicitation and would accept anything; the command must not run.
import { randomUUID } from 'node:crypto'
import { existsSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { sandboxUserDir } from '@toolvisor/process-runtime/testing'
import { afterEach, describe, expect, it } from 'vitest'
import { bashMcpArgs, eventually, tagged, tempDir } from './helpers.js'
import { hasBwrap, isRoot } from './sandbox-helpers.js'

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

describe.skipIf(!hasBwrap || !isRoot)('a bash escalation from a 2026-07-28 client (root)', () => {
  it('is refused closed: nothing is asked, nothing runs, and the model is told no channel can ask', async () => {
    const cwd = sandboxUserDir(import.meta.dirname, 'era-2026-work')
    cleanups.push(() => rmSync(cwd, { recursive: true, force: true }))
    const tag = randomUUID()
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: bashMcpArgs('bwrap', 'read-only', '--state-dir', tempDir()),
      cwd,
      env: { ...(process.env as Record<string, string>), TV_TEST_TAG: tag },
      stderr: 'pipe',
    })
    const client = new Client(
      { name: 'era-2026', version: '1' },
      {
        capabilities: { elicitation: { form: {} } },
        versionNegotiation: { mode: { pin: '2026-07-28' } },
      },
    )
    let asked = 0
    client.setRequestHandler('elicitation/create', async () => {
      asked++
      return { action: 'accept', content: {} }
    })
    await client.connect(transport)
    cleanups.push(async () => {
      await client.close()
      expect(await eventually(() => tagged(tag).length === 0), 'processes left').toBe(true)
    })
    expect(client.getProtocolEra()).toBe('modern')

    const marker = join(cwd, 'escalated')
    const result = await client.callTool({
      name: 'bash',
      arguments: {
        command: `echo ran > ${marker}`,
        description: 'Write a marker file',
        sandbox_permissions: 'danger-full-access',
        justification: 'The test writes its marker file.',
      },
    })
    expect(result.isError).toBe(true)
    expect(JSON.stringify(result.content)).toContain(
      'sandbox escalation to \\"danger-full-access\\" requires approval, but no approval channel is available',
    )
    expect(asked).toBe(0)
    expect(existsSync(marker)).toBe(false)
  })
})
