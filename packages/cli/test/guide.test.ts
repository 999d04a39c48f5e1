/**
 * The complete tools of docs/guides/writing-a-tool.md (issue 18.5) work as printed: each block
 * marked `<!-- tested: tool NAME -->` is saved as an executable and run through the CLI.
 */
import { chmodSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { examples, run, tempDir } from './helpers.js'

const guide = readFileSync(join(examples, '..', '..', 'docs', 'guides', 'writing-a-tool.md'), 'utf8')

/** The tool the guide prints under `<!-- tested: tool NAME -->`, saved as an executable. */
function toolFromGuide(name: string): string {
  const marked = guide.split(`<!-- tested: tool ${name} -->`)[1]
  const code = marked?.match(/```[a-z]*\n([\s\S]*?)```/)?.[1]
  expect(code, `the guide has no tested tool "${name}"`).toBeDefined()
  const path = join(tempDir(), name)
  writeFileSync(path, code!)
  chmodSync(path, 0o755)
  return path
}

describe('the complete tools of the writing-a-tool guide', () => {
  it('biggest: a protocol 2 oneshot whose result is the array of its events', async () => {
    const path = toolFromGuide('biggest')
    const described = await run(['describe', path])
    expect(described.stdout.split('\n').slice(0, 6)).toEqual([
      `${path} (v2 oneshot, jsonl events)`,
      '',
      'biggest',
      '  Lists the largest files under a directory, largest first. Returns a JSON array of {path, bytes}, paths relative to the directory.',
      '  dir  string, positional: the directory to search',
      '  top  integer, optional, dashdashequal: how many files to list (default 5)',
    ])
    const called = await run(['call', path, JSON.stringify({ dir: examples, top: 2 })])
    expect([called.code, called.stderr]).toEqual([0, ''])
    const events = JSON.parse(called.stdout) as Array<{ path: string; bytes: number }>
    expect(events).toHaveLength(2)
    expect(events[0]!.bytes).toBeGreaterThanOrEqual(events[1]!.bytes)
    expect(Number.isInteger(events[0]!.bytes)).toBe(true)
    const missing = await run(['call', path, JSON.stringify({ dir: join(tempDir(), 'gone') })])
    expect(missing.code).toBe(1)
    expect(missing.stdout).toContain('biggest: ')
    expect(missing.stdout).toContain('is not a directory')
  })

  it('countdown: a protocol 2 stream whose events arrive as progress', async () => {
    const path = toolFromGuide('countdown')
    const described = await run(['describe', path])
    expect(described.stdout.split('\n')[0]).toBe(`${path} (v2 stream, jsonl events)`)
    expect(described.stdout).not.toContain('warning')
    const called = await run(['call', path, '{"n":2}', '--progress'])
    expect([called.code, called.stdout]).toEqual([0, '[{"left":2},{"left":1}]\n'])
    expect(called.stderr).toBe('[1] {"left":2}\n[2] {"left":1}\n')
  })
})
