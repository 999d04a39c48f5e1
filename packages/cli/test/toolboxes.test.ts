/**
 * Wrong paths fail fast (issue 18.4): a toolbox that is missing or holds no tool stops `mcp` with
 * exit 2 before it serves; `call NAME --toolbox DIR` finds a tool by its name.
 */
import { chmodSync, copyFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { examples, run, tempDir } from './helpers.js'
import { rawMcp } from './raw-mcp.js'

describe('toolvisor mcp with a toolbox that cannot serve', () => {
  it('exits 2 for a directory that does not exist, before it answers initialize', async () => {
    const missing = join(tempDir(), 'no-such-dir')
    const { code, stdout, stderr } = await run(['mcp', '--toolbox', missing])
    expect([code, stdout]).toEqual([2, ''])
    expect(stderr).toBe(`toolvisor mcp: toolbox ${missing}: no such directory\n`)
  })

  it('exits 2 for a file given as a toolbox', async () => {
    const { code, stderr } = await run(['mcp', '--toolbox', join(examples, 'counter')])
    expect(code).toBe(2)
    expect(stderr).toBe(
      `toolvisor mcp: toolbox ${join(examples, 'counter')}: not a directory (a toolbox is a directory of tools; to run one tool, use toolvisor call PATH)\n`,
    )
  })

  it('exits 2 for a toolbox that holds no tool, naming what is there', async () => {
    const empty = tempDir()
    const notTools = tempDir()
    writeFileSync(join(notTools, 'README.md'), '# tools\n')
    copyFileSync(join(examples, 'counter'), join(notTools, 'counter~'))
    chmodSync(join(notTools, 'counter~'), 0o755)
    const first = await run(['mcp', '--toolbox', empty])
    expect(first.code).toBe(2)
    expect(first.stderr).toBe(
      `toolvisor mcp: toolbox ${empty}: holds no tool (a tool is an executable file directly inside it; it is empty); pass --allow-empty to serve it anyway\n`,
    )
    const second = await run(['mcp', '--toolbox', examples, '--toolbox', notTools])
    expect(second.code).toBe(2)
    expect(second.stderr).toBe(
      `toolvisor mcp: toolbox ${notTools}: holds no tool (a tool is an executable file directly inside it; not tools: README.md, counter~ (no execute bit, or an editor backup)); pass --allow-empty to serve it anyway\n`,
    )
  })

  it('serves an empty toolbox with --allow-empty', async () => {
    expect(await firstToolsList(['--toolbox', tempDir(), '--allow-empty'])).toEqual(['processes'])
  })
})

/** The names the first `tools/list` answers when it is sent right after `initialize`. */
async function firstToolsList(args: string[]): Promise<string[]> {
  const server = rawMcp(args)
  server.send({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
  })
  server.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
  server.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' })
  const answer = (await server.waitForMessage((m) => m.id === 2)) as {
    result: { tools: Array<{ name: string }> }
  }
  server.child.stdin.end()
  expect(await server.exited).toBe(0)
  return answer.result.tools.map((tool) => tool.name)
}

describe('toolvisor mcp --load-first', () => {
  it('lists every tool in the first tools/list, for clients that never refresh the list', async () => {
    expect((await firstToolsList(['--toolbox', examples, '--load-first'])).join(' ')).toBe(
      'processes counter echo_args file_stats git_lite__status git_lite__log log_lines log_watcher log_watcher__send word_count help',
    )
  })
})

describe('toolvisor call NAME --toolbox DIR', () => {
  it('finds a tool by its model-facing name, by a command name, and by its file name', async () => {
    const byName = await run(['call', 'word_count', '{"text":"a b a"}', '--toolbox', examples])
    expect([byName.code, byName.stdout, byName.stderr]).toEqual([0, '3 words, 1 line, 5 characters\n', ''])
    const byFile = await run(['call', 'word-count', '{"text":"a b a"}', '--toolbox', examples])
    expect(byFile.stdout).toBe(byName.stdout)
    const command = await run([
      'call',
      'git_lite__status',
      JSON.stringify({ dir: examples }),
      '--toolbox',
      examples,
    ])
    expect([command.code, command.stderr]).toEqual([0, ''])
  })

  it('lists the tools there when none has the name, and exits 2', async () => {
    const { code, stdout, stderr } = await run(['call', 'word_cont', '--toolbox', examples])
    expect([code, stdout]).toEqual([2, ''])
    expect(stderr).toBe(
      `toolvisor call: no tool named "word_cont" in ${examples}; the tools there: counter, echo_args, file_stats, git_lite__status, git_lite__log, log_lines, log_watcher, word_count (a path to the tool's file works too)\n`,
    )
  })

  it('says how to call by name when no toolbox is given, and exits 2 for a missing toolbox', async () => {
    const bare = await run(['call', 'word_count'])
    expect(bare.code).toBe(2)
    expect(bare.stderr).toBe(
      'toolvisor call: word_count: no such file; to call a tool by its name, pass the toolbox that holds it: --toolbox DIR\n',
    )
    const missing = join(tempDir(), 'gone')
    const gone = await run(['call', 'word_count', '--toolbox', missing])
    expect(gone.code).toBe(2)
    expect(gone.stderr).toBe(`toolvisor call: toolbox ${missing}: no such directory\n`)
  })
})

describe('what a first tool gets wrong, said plainly', () => {
  it('describe names CRLF line endings instead of a spawn ENOENT', async () => {
    const path = join(tempDir(), 'dos-tool')
    writeFileSync(path, '#!/bin/sh\r\necho "{}"\r\n')
    chmodSync(path, 0o755)
    const { code, stderr } = await run(['describe', path])
    expect(code).toBe(2)
    expect(stderr).toBe(
      `toolvisor describe: ${path}: has Windows (CRLF) line endings: its first line "#!/bin/sh\\r" names a program that ends in a carriage return, which does not exist; convert the file to LF endings (sed -i 's/\\r$//' FILE, or dos2unix FILE)\n`,
    )
  })

  it('describe shows each likely typo in the describe document as a warning with what was meant', async () => {
    const document = {
      protocol: 2,
      slug: 'ticker',
      description: 'ticks',
      proccess: { mode: 'stream' },
      runtim: {},
      mode: 'stream',
      args: [
        {
          name: 'n',
          description: 'n',
          type: 'integer',
          backing_type: 'integer',
          'backing-type': 'x',
          arity: 'single',
          mode: 'positional',
        },
      ],
    }
    const path = join(tempDir(), 'ticker')
    writeFileSync(path, `#!/bin/sh\necho '${JSON.stringify(document)}'\n`)
    chmodSync(path, 0o755)
    const { code, stdout } = await run(['describe', path])
    expect(code).toBe(0)
    expect(stdout.split('\n').filter((line) => line.startsWith(path) || line.startsWith('warning'))).toEqual([
      `${path} (v2 oneshot, stdout as is)`,
      'warning: $.proccess: unknown key, ignored; did you mean "process"?',
      'warning: $.runtim: unknown key, ignored; did you mean "runtime"?',
      'warning: $.mode: unknown key, ignored; did you mean "process.mode"?',
      'warning: $.args[0].backing-type: unknown key, ignored; did you mean "backing_type"?',
    ])
  })

  it('call refuses a wrong type and an unknown argument, naming each, and runs nothing', async () => {
    const list =
      '; the arguments are "text" (string, required), "top" (integer, optional); the tool was not run\n'
    const wrong = await run(['call', join(examples, 'word-count'), '{"text":"a","top":"three"}'])
    expect([wrong.code, wrong.stdout]).toEqual([
      1,
      `word_count: argument "top": expected an integer; got "three"${list}`,
    ])
    const unknown = await run(['call', join(examples, 'word-count'), '{"text":"a","tpo":3}'])
    expect([unknown.code, unknown.stdout]).toEqual([
      1,
      `word_count: argument "tpo": no such argument (did you mean "top"?)${list}`,
    ])
    const quoted = await run(['call', join(examples, 'word-count'), '{"text":"a b a","top":"1"}'])
    expect([quoted.code, quoted.stdout]).toEqual([0, '3 words, 1 line, 5 characters\n     2  a\n'])
  })
})
