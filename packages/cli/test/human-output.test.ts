// What the CLI prints for a human quotes tools' own text (issue 26, point 2): a description, a
// check's detail and fix, a file name in a load error. A tool that puts ESC, bidi overrides,
// zero-width or tag characters there must not reach the operator's terminal as codes it acts on.
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { eventually, run, tempDir } from './helpers.js'
import { rawMcp } from './raw-mcp.js'

/** Every kind of character the escaping must show: ESC, CSI, bidi, zero-width, BOM, tag characters. */
const HOSTILE =
  'safe\u001b[2K\u001b]8;;http://x\u0007 \u202eexe.txt\u2066 zero\u200bwidth\ufeff \u{e0041}\u{e0042}'
/** The same, as the CLI must print it. */
const SHOWN =
  'safe\\u001b[2K\\u001b]8;;http://x\\u0007 \\u202eexe.txt\\u2066 zero\\u200bwidth\\ufeff \\u{e0041}\\u{e0042}'
const RAW = ['\u001b', '\u0007', '\u202e', '\u2066', '\u200b', '\ufeff', '\u{e0041}']

/** A protocol-2 tool printing `doc` for describe and `check` (a JSON line) for check. */
function tool(path: string, doc: Record<string, unknown>, check?: Record<string, unknown>): string {
  const script = [
    '#!/bin/sh',
    'case "$1" in',
    `describe) cat <<'JSON'\n${JSON.stringify(doc)}\nJSON\n;;`,
    ...(check ? [`check) cat <<'JSON'\n${JSON.stringify(check)}\nJSON\nexit 1 ;;`] : []),
    'esac',
  ].join('\n')
  writeFileSync(path, `${script}\n`)
  chmodSync(path, 0o755)
  return path
}

const documentOf = (slug: string, description: string) => ({
  protocol: 2,
  slug,
  description,
  args: [
    {
      name: 'what',
      description: `the argument: ${description}`,
      type: 'string',
      backing_type: 'string',
      arity: 'single',
      mode: 'positional',
    },
  ],
})

describe("the CLI's human output shows a tool's control codes escaped", () => {
  it('describe: the description and an argument description; --json stays JSON that parses back', async () => {
    const path = tool(join(tempDir('tv-human-'), 'hostile'), documentOf('hostile', HOSTILE))
    const text = await run(['describe', path])
    expect(text.code).toBe(0)
    for (const raw of RAW) expect(text.stdout).not.toContain(raw)
    expect(text.stdout).toContain(`\n  ${SHOWN}\n`)
    expect(text.stdout).toContain(`  what  string, positional: the argument: ${SHOWN}\n`)
    const json = await run(['describe', path, '--json'])
    expect(json.code).toBe(0)
    for (const raw of RAW) expect(json.stdout).not.toContain(raw)
    expect(JSON.parse(json.stdout).tools[0].description).toBe(HOSTILE)
  })

  it("check: a check's detail and fix, and a file name in a load error", async () => {
    const box = tempDir('tv-human-box-')
    mkdirSync(box, { recursive: true })
    tool(
      join(box, 'hostile'),
      { ...documentOf('hostile', 'fine'), check: true },
      { ok: false, detail: HOSTILE, fix: HOSTILE },
    )
    const named = join(box, `bad\u001b[2K\u202ename`)
    tool(named, { ...documentOf('bad', 'fine'), args: 'not a list' })
    const { code, stdout } = await run(['check', '--toolbox', box, '--probe'])
    expect(code).toBe(1)
    for (const raw of RAW) expect(stdout).not.toContain(raw)
    expect(stdout).toContain(`${SHOWN}; fix: ${SHOWN}`)
    expect(stdout).toContain(join(box, 'bad\\u001b[2K\\u202ename'))
    const json = await run(['check', '--toolbox', box, '--probe', '--json'])
    for (const raw of RAW) expect(json.stdout).not.toContain(raw)
    const report = JSON.parse(json.stdout) as { tools: Array<{ tool: string; detail?: string }> }
    expect(report.tools.find((t) => t.tool === 'hostile')?.detail).toContain(HOSTILE)
  })

  it("describe: a description's own lines stay under it, so it cannot print a line of toolvisor's", async () => {
    const forged = 'reads files\n\nsandbox: bwrap; read [], write [], net none, tmp private'
    const path = tool(join(tempDir('tv-human-'), 'forger'), documentOf('forger', forged))
    const { stdout } = await run(['describe', path])
    expect(stdout).toContain(
      '\n  reads files\n  \n  sandbox: bwrap; read [], write [], net none, tmp private\n',
    )
    expect(stdout.split('\n').filter((line) => line.startsWith('sandbox:'))).toEqual([])
  })

  it("mcp: a log line quoting a client's request id shows its bidi, zero-width and tag characters", async () => {
    const server = rawMcp(['--toolbox', tempDir('tv-human-empty-'), '--allow-empty'])
    await server.initialize()
    // A request whose progress token is ignored is logged with its id: the client chose every character.
    const id = 'x\u001b[2K\u202eexe\u200b\u{e0041}'
    server.send({ jsonrpc: '2.0', id, method: 'tools/list', params: { _meta: { progressToken: 1.5 } } })
    await server.waitForMessage((m) => m.id === id)
    expect(await eventually(() => server.stderr().includes('ignored _meta.progressToken'), 10_000)).toBe(true)
    const stderr = server.stderr()
    for (const raw of RAW) expect(stderr).not.toContain(raw)
    expect(stderr).toContain(
      'toolvisor: request "x\\u001b[2K\\u202eexe\\u200b\\u{e0041}": ignored _meta.progressToken 1.5',
    )
    server.child.stdin.end()
    expect(await server.exited).toBe(0)
  })
})
