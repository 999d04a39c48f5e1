// The bash sandbox over MCP (issue 14): `toolvisor mcp --bash --sandbox bwrap --bash-sandbox
// read-only` served to the SDK client; escalations asked through elicitation (approve, decline,
// cancel), a client without elicitation told the approval is unavailable, nothing run on a refusal;
// the tools' annotations and the cards in each result's _meta.
import { randomUUID } from 'node:crypto'
import { existsSync, mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import {
  type CallToolResult,
  ElicitRequestSchema,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js'
import { PRESENTATION_META_KEY } from '@toolvisor/mcp-server'
import { sandboxUserDir } from '@toolvisor/process-runtime/testing'
import { afterEach, describe, expect, it } from 'vitest'
import { bin, eventually, tagged, tempDir } from './helpers.js'

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

/**
 * The working directory: writable by the sandbox user, outside /tmp (bwrap's private /tmp hides
 * it); next to this file, or under /srv or the like when the checkout is out of that user's reach.
 */
function workDir(): string {
  const dir = sandboxUserDir(import.meta.dirname, 'work')
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** The SDK client on `toolvisor mcp --bash --sandbox bwrap --bash-sandbox MODE` (read-only) in `cwd`. */
async function served(cwd: string, answer?: () => ElicitResult, mode = 'read-only') {
  const tag = randomUUID()
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin, 'mcp', '--bash', '--sandbox', 'bwrap', '--bash-sandbox', mode, '--state-dir', tempDir()],
    cwd,
    env: { ...(process.env as Record<string, string>), TV_TEST_TAG: tag },
    stderr: 'pipe',
  })
  const capabilities = answer ? { elicitation: {} } : {}
  const client = new Client({ name: 'sandbox-test', version: '0.0.0' }, { capabilities })
  const asked: string[] = []
  if (answer) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message)
      return answer()
    })
  }
  await client.connect(transport)
  cleanups.push(async () => {
    await client.close()
    expect(await eventually(() => tagged(tag).length === 0), 'processes left').toBe(true)
  })
  const call = async (args: Record<string, unknown>, name = 'bash') =>
    (await client.callTool({ name, arguments: args })) as CallToolResult
  return { client, call, asked }
}

const textOf = (result: CallToolResult) =>
  result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n')
const escalate = (file: string) => ({
  command: `echo ran > ${file}`,
  description: 'Write a marker file',
  sandbox_permissions: 'workspace-write',
  justification: 'The test writes its marker file.',
})

describe('toolvisor mcp --bash --bash-sandbox read-only, asking through elicitation', () => {
  it('approve runs that one call wider; decline and cancel give the seed texts and run nothing', async () => {
    const cwd = workDir()
    let next: ElicitResult = { action: 'accept', content: {} }
    const { call, asked } = await served(cwd, () => next)
    const approved = await call(escalate('approved'))
    expect(textOf(approved)).toBe('(no output)')
    expect(existsSync(join(cwd, 'approved'))).toBe(true)
    expect(asked[0]).toContain('echo ran > approved')
    expect(asked[0]).toContain('Justification: The test writes its marker file.')
    expect(asked[0]).toContain('"workspace-write" sandbox mode')
    const after = await call({ command: 'echo ran > after', description: 'Write again' })
    expect(textOf(after)).toContain('[sandbox: file access denied under read-only mode]')
    expect(existsSync(join(cwd, 'after'))).toBe(false)

    next = { action: 'decline' }
    const declined = await call(escalate('declined'))
    expect(declined).toMatchObject({ isError: true })
    expect(textOf(declined)).toBe('Error: the user rejected escalating this command to "workspace-write"')
    next = { action: 'cancel' }
    const cancelled = await call(escalate('cancelled'))
    expect(textOf(cancelled)).toBe('Error: approval for escalating to "workspace-write" was cancelled')
    expect(asked).toHaveLength(3)
    expect(existsSync(join(cwd, 'declined'))).toBe(false)
    expect(existsSync(join(cwd, 'cancelled'))).toBe(false)
  })

  it.skipIf(process.getuid?.() !== 0)(
    'workspace-write: a write the sandbox user may not make (toolvisor is root) is a denial, with the marker and the hint (root only: no sandbox user otherwise)',
    async () => {
      const cwd = workDir()
      // Outside the workspace, writable by root (danger-full-access would write it), not by nobody.
      const closed = join(workDir(), 'root-only')
      mkdirSync(closed, { mode: 0o700 })
      const { call } = await served(cwd, undefined, 'workspace-write')
      const result = await call({ command: `touch ${closed}/zz`, description: 'Touch a root-only file' })
      const text = textOf(result)
      expect(text).toContain('Permission denied')
      expect(text).toContain('[sandbox: file access denied under workspace-write mode]')
      expect(text).toContain('[sandbox: escalation available')
      expect(existsSync(join(closed, 'zz'))).toBe(false)
      // A failure that is not about access stays unflagged.
      const other = textOf(await call({ command: 'ls /nonexistent-path', description: 'List nothing' }))
      expect(other).not.toContain('[sandbox:')
    },
  )

  it('a client without elicitation gets the unavailable text, and nothing runs', async () => {
    const cwd = workDir()
    const { call } = await served(cwd)
    const result = await call(escalate('unasked'))
    expect(textOf(result)).toBe(
      'Error: sandbox escalation to "workspace-write" requires approval, but no approval channel is available',
    )
    expect(existsSync(join(cwd, 'unasked'))).toBe(false)
  })

  it('lists annotations that say the truth, and carries the cards in each result _meta', async () => {
    const { client, call } = await served(workDir())
    const { tools } = await client.listTools()
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool.annotations]))
    expect(byName.bash).toEqual({
      title: 'Run a shell command',
      readOnlyHint: false,
      destructiveHint: true,
      openWorldHint: true,
    })
    expect(byName.bash_output).toEqual({
      title: 'Read background task output',
      readOnlyHint: true,
      openWorldHint: false,
    })
    expect(byName.bash_kill).toMatchObject({ readOnlyHint: false, destructiveHint: true })
    expect(byName.bash_sandbox_mode).toMatchObject({ readOnlyHint: false, destructiveHint: false })
    const ran = await call({ command: 'echo hi; exit 4', description: 'Say hi', workdir: '.' })
    expect(ran._meta?.[PRESENTATION_META_KEY]).toEqual({
      call: { card: 'terminal', title: 'echo hi; exit 4', description: 'Say hi', cwd: '.' },
      result: { card: 'terminal', title: 'echo hi; exit 4', output: 'hi', exitCode: 4 },
    })
    const read = await call({ task_id: 'nope' }, 'bash_output')
    expect(read._meta?.[PRESENTATION_META_KEY]).toMatchObject({
      call: { card: 'generic', title: 'Read output from background task nope', rawInput: 'nope' },
    })
    const malformed = await call({ cmd: 'ls' })
    expect(malformed._meta?.[PRESENTATION_META_KEY]).toMatchObject({
      call: { card: 'generic', title: 'bash', rawInput: { cmd: 'ls' } },
    })
  })
})
