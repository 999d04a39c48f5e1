// The compatibility suite (issue 28): tools written as real tool collections write them (agents-exe's
// write-file.sh, shell idioms that open the standard streams by name, Python doing the same), each
// run through `toolvisor call` and through `toolvisor mcp` with the SDK client, and compared byte for
// byte with a run of the tool straight from here. Before the fork server gave pipes, `cat
// /dev/stdin`, `> /dev/stderr` and `tee /dev/stderr` failed with ENXIO (or wrote nothing).
import { spawnSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bin, eventually, fixtures, run, tagged, tempDir } from './helpers.js'

const box = join(fixtures, 'compat')
const hasPython = existsSync('/usr/bin/python3')

interface Case {
  readonly tool: string
  readonly slug: string
  /** The call's arguments, and the same call made by hand: argv after `run`, and stdin. */
  readonly args: Record<string, unknown>
  readonly argv: readonly string[]
  readonly stdin: string
  /** A file the tool writes, compared too. */
  readonly writes?: string
}

// The test helper's temporary folders go after each test; this one stays for the file.
const scratch = mkdtempSync(join(tmpdir(), 'tv-compat-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))
const written = join(scratch, 'notes.md')
const markdown = '# Notes\n\n- first item\n- second item\n--- a rule\n'
const list = '- first item\n- second item\n--- a rule'
// The operator's allowDash (decision 0099) for the tools that take free text positionally.
const config = join(scratch, 'toolvisor.json')
writeFileSync(
  config,
  JSON.stringify({
    toolboxes: [{ path: box, allowDash: { write_content: ['content'], py_append: ['content'] } }],
  }),
)
const cases: readonly Case[] = [
  {
    tool: 'write-content',
    slug: 'write_content',
    args: { filepath: written, content: list },
    argv: [written, list],
    stdin: '',
    writes: written,
  },
  {
    tool: 'write-content',
    slug: 'write_content',
    args: { filepath: written, content: '--- a rule, then -rf', check_action: 'none' },
    argv: [written, '--- a rule, then -rf', 'none'],
    stdin: '',
    writes: written,
  },
  { tool: 'cat-stdin', slug: 'cat_stdin', args: { content: 'one\ntwo' }, argv: [], stdin: 'one\ntwo\n' },
  { tool: 'tee-stderr', slug: 'tee_stderr', args: { word: 'hello' }, argv: ['hello'], stdin: '' },
  {
    tool: 'write-file',
    slug: 'write_file',
    args: { path: written, content: markdown.trimEnd() },
    argv: [written],
    stdin: markdown,
    writes: written,
  },
  { tool: 'read-lines', slug: 'read_lines', args: { content: 'a\nb\nc' }, argv: [], stdin: 'a\nb\nc\n' },
  {
    tool: 'read-lines',
    slug: 'read_lines',
    args: { content: 'x', prefix: 'row' },
    argv: ['row'],
    stdin: 'x\n',
  },
  { tool: 'tee-stdout', slug: 'tee_stdout', args: { word: 'twice' }, argv: ['twice'], stdin: '' },
  ...(hasPython
    ? [
        {
          tool: 'py-append',
          slug: 'py_append',
          args: { filepath: written, content: '- a list item' },
          argv: [written, '- a list item'],
          stdin: '',
          writes: written,
        },
        {
          tool: 'py-append',
          slug: 'py_append',
          args: { filepath: written, content: '--flag-looking text', times: 3 },
          argv: [written, '--flag-looking text', '3'],
          stdin: '',
          writes: written,
        },
        {
          tool: 'py-upper',
          slug: 'py_upper',
          args: { content: 'mixed Case' },
          argv: [],
          stdin: 'mixed Case\n',
        },
      ]
    : []),
]

/**
 * The tool run as a shell runs it, its standard streams pipes (Node's own spawn would give it socket
 * pairs): its stdout, and the file it wrote (removed after).
 */
function direct(c: Case): { stdout: string; file?: string } {
  const pipeline = 'printf "%s" "$IN" | "$@" 2> >(cat >&2) | cat'
  const ran = spawnSync('/bin/bash', ['-c', pipeline, 'bash', join(box, c.tool), 'run', ...c.argv], {
    env: { ...process.env, IN: c.stdin },
    encoding: 'utf8',
  })
  expect(ran.status, ran.stderr).toBe(0)
  return { stdout: ran.stdout, ...taken(c) }
}

function taken(c: Case): { file?: string } {
  if (c.writes === undefined) return {}
  const file = readFileSync(c.writes, 'utf8')
  rmSync(c.writes)
  return { file }
}

describe('tools written as real collections write them', () => {
  it.skipIf(!hasPython)('has python3 at /usr/bin for the Python tool (it skips without)', () => {
    expect(hasPython).toBe(true)
  })

  it('refuses a leading "-" in write_content\'s content without the override, running nothing', async () => {
    const args = { filepath: written, content: '- item' }
    const refused = await run(['call', join(box, 'write-content'), JSON.stringify(args)])
    expect(refused.code).toBe(1)
    expect(refused.stdout).toContain('argument "content": "- item" starts with "-"')
    expect(refused.stdout).toContain('the tool was not run')
    expect(existsSync(written)).toBe(false)
    // The override names content only: another positional keeps the refusal.
    const flag = { ...args, content: 'x', check_action: '-n' }
    const still = await run(['call', join(box, 'write-content'), '--config', config, JSON.stringify(flag)])
    expect(still.code).toBe(1)
    expect(still.stdout).toContain('argument "check_action": "-n" starts with "-"')
    expect(existsSync(written)).toBe(false)
  })

  for (const c of cases) {
    it(`toolvisor call ${c.tool} ${JSON.stringify(c.args)}: the bytes of a direct run`, async () => {
      const expected = direct(c)
      const called = await run(['call', join(box, c.tool), '--config', config, JSON.stringify(c.args)])
      expect(called.stderr).toBe('')
      expect(called.code).toBe(0)
      expect({ stdout: called.stdout, ...taken(c) }).toEqual(expected)
    })
  }

  describe('through toolvisor mcp and the SDK client', () => {
    const tag = randomUUID()
    let client: Client
    beforeAll(async () => {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [bin, 'mcp', '--config', config, '--state-dir', tempDir('tv-compat-state-')],
        env: { ...(process.env as Record<string, string>), TV_TEST_TAG: tag },
        stderr: 'pipe',
      })
      client = new Client({ name: 'compat', version: '0.0.0' })
      await client.connect(transport)
    })
    afterAll(async () => {
      await client.close()
      expect(await eventually(() => tagged(tag).length === 0), 'processes left').toBe(true)
    })

    for (const c of cases) {
      it(`${c.slug} ${JSON.stringify(c.args)}: the bytes of a direct run`, async () => {
        const expected = direct(c)
        const result = (await client.callTool({ name: c.slug, arguments: c.args })) as {
          isError?: boolean
          content: Array<{ text: string }>
        }
        expect(result.isError ?? false, JSON.stringify(result)).toBe(false)
        const stdout = result.content.map((part) => part.text).join('')
        expect({ stdout, ...taken(c) }).toEqual(expected)
      })
    }
  })
})
