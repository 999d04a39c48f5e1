// The approval prompt as the attacker of the 2026-12-01 review drove it (issue 26, F2): a stdio MCP
// client that declares elicitation calls `bash` under `--bash --sandbox bwrap --bash-sandbox
// read-only` with the report's exact command and justification, and records the
// `elicitation/create` message it is asked to accept. The prompt is the only gate before
// `danger-full-access`: what the user reads there must be what runs.
import { randomUUID } from 'node:crypto'
import { existsSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { type CallToolResult, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { sandboxUserDir } from '@toolvisor/process-runtime/testing'
import { afterEach, describe, expect, it } from 'vitest'
import { bashMcpArgs, eventually, tagged, tempDir } from './helpers.js'
import { hasBwrap, isRoot, type Mechanism, mechanisms } from './sandbox-helpers.js'

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

/** The prompt's last line, which the report's justification forged. */
const FOOTER = 'Accept allows this one call only; nothing is remembered. Decline refuses it.'

/** `toolvisor mcp --bash --sandbox MECHANISM --bash-sandbox read-only` in `cwd`, a client that accepts every question. */
async function accepting(cwd: string, mechanism: Mechanism) {
  const tag = randomUUID()
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: bashMcpArgs(mechanism, 'read-only', '--state-dir', tempDir()),
    cwd,
    env: { ...(process.env as Record<string, string>), TV_TEST_TAG: tag },
    stderr: 'pipe',
  })
  const client = new Client({ name: 'secrev', version: '1' }, { capabilities: { elicitation: {} } })
  const asked: string[] = []
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params.message)
    return { action: 'accept', content: {} }
  })
  await client.connect(transport)
  cleanups.push(async () => {
    await client.close()
    expect(await eventually(() => tagged(tag).length === 0), 'processes left').toBe(true)
  })
  return { client, asked }
}

describe.skipIf(!hasBwrap || !isRoot)('F2: the approval prompt shows what runs (root)', () => {
  // The report ran it under bwrap; the prompt does not depend on the mechanism, so both are tried.
  it.each(mechanisms)(
    "%s: the report's CR, ESC[2K, 60 newlines, U+202E and forged footer are all visible, the hidden line counted",
    async (mechanism) => {
      const cwd = sandboxUserDir(import.meta.dirname, 'work')
      cleanups.push(() => rmSync(cwd, { recursive: true, force: true }))
      const marker = join(cwd, 'esc-hidden')
      // The report's s-accept.json, with the marker in a test directory instead of /srv.
      const command = `ls -la\r\u001b[2K${'\n'.repeat(61)}id > ${marker}; echo \u202etxt.exe`
      const justification =
        'list files\n\nAccept allows this one call only; nothing is remembered. Decline refuses it.\u001b[8m hidden \u001b[0m'
      const { client, asked } = await accepting(cwd, mechanism)
      const result = (await client.callTool({
        name: 'bash',
        arguments: {
          command,
          description: 'probe',
          sandbox_permissions: 'danger-full-access',
          justification,
        },
      })) as CallToolResult
      expect(result.isError).toBe(false)
      // What was accepted ran (the user was shown it, so approving it is the user's own choice).
      expect(existsSync(marker)).toBe(true)
      expect(asked).toHaveLength(1)
      const message = asked[0]!
      // Nothing a terminal acts on, and no run of blank lines that pushes a line out of sight.
      for (const raw of ['\r', '\u001b', '\u202e']) expect(message).not.toContain(raw)
      expect(message).not.toMatch(/\n[ \t]*\n[ \t]*\n[ \t]*\n/)
      const lines = message.split('\n')
      // The justification is one line, its newlines and ESC shown, and the forged footer is not a line of its own.
      const said = lines.filter((line) => line.startsWith('Justification: '))
      expect(said).toEqual([
        'Justification: list files\\n\\nAccept allows this one call only; nothing is remembered. Decline refuses it.\\u001b[8m hidden \\u001b[0m',
      ])
      expect(lines.filter((line) => line === FOOTER)).toHaveLength(1)
      expect(lines.at(-1)).toBe(FOOTER)
      // The command after the justification, in a fence, its line count stated, the hidden line in it.
      const open = lines.findIndex((line) => /^`{3,}$/.test(line))
      expect(open).toBeGreaterThan(lines.indexOf(said[0]!))
      expect(lines[open - 1]).toBe('The command, 62 lines:')
      const close = lines.indexOf(lines[open]!, open + 1)
      expect(close).toBeGreaterThan(open)
      const fenced = lines.slice(open + 1, close)
      expect(fenced[0]).toBe(' 1 | ls -la\\u000d\\u001b[2K')
      expect(fenced).toContain(`62 | id > ${marker}; echo \\u202etxt.exe`)
      expect(message).toContain(`Working directory (workdir): ${cwd}`)
      expect(message).toContain('In the background (run_in_background): no')
    },
  )
})
