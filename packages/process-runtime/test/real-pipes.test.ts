import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { makeRuntime, spawnerUnderTest, tempDir, tool } from './helpers.js'

/**
 * A tool's 0, 1 and 2 are pipes, as a shell gives them (issue 28 A): the idioms that open them
 * again by name work, on every launch path. Before, they were socket pairs and each of these failed
 * with ENXIO (`cat /dev/stdin` wrote nothing and the tool still said it worked).
 */
const IDIOMS = `#!/bin/bash
set -e
kind() { if [ -p "$1" ]; then echo pipe; elif [ -f "$1" ]; then echo file; else echo other; fi; }
echo "kinds: $(kind /dev/stdin) $(kind /dev/stdout) $(kind /dev/stderr)" >&2
content=$(cat /dev/stdin)
echo "from stdin: $content" > /dev/stdout
echo "to stderr by name" > /dev/stderr
echo "through tee" | tee /dev/stderr
echo "by fd number" > /proc/self/fd/1
`

/**
 * The launch path under test, and what stdin given whole is there (decision 0098: a file without a
 * fork server). `@toolvisor/launch-native` runs this file with its fork server.
 */
const paths =
  spawnerUnderTest === 'native'
    ? { 'the fork server': { options: {}, stdin: 'pipe' } }
    : { "Node's own spawn (no fork server)": { options: {}, stdin: 'file' } }

describe('a tool reopens its standard descriptors by name', () => {
  for (const [path, { options, stdin }] of Object.entries(paths)) {
    it(`cat /dev/stdin, > /dev/stdout, > /dev/stderr, tee /dev/stderr, /proc/self/fd/1: ${path}`, async () => {
      const dir = tempDir('tv-pipes-')
      const file = join(dir, 'idioms')
      writeFileSync(file, IDIOMS, { mode: 0o755 })
      const runtime = makeRuntime(options)
      const proc = runtime.start({ tool: tool(file), argv: [], stdin: Buffer.from('the content\n') })
      const exit = await proc.exit
      expect(proc.output.stderr().head.toString()).toBe(
        `kinds: ${stdin} pipe pipe\nto stderr by name\nthrough tee\n`,
      )
      expect(exit).toMatchObject({ status: 'exited', code: 0 })
      expect(proc.output.stdout().head.toString()).toBe(
        'from stdin: the content\nthrough tee\nby fd number\n',
      )
    })
  }
})
