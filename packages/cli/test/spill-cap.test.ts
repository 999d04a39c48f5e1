/**
 * F7 of the 2026-12-01 review, as the report ran it: one oneshot call through a bwrap tool
 * (`head -c 1200M /dev/zero | tr "\0" a; echo`) wrote a 1.2 GB spill file against a 1 GiB disk
 * budget, and its result said "the spill file holds it whole". Each stream's spill now stops at its
 * cap (`spillBytes`, 256 MiB by default), and the result says how much was not kept.
 */
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { chmodSync, readdirSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { bin, eventually, tagged } from './helpers.js'
import { dir, hasBwrap } from './sandbox-helpers.js'

const MiB = 1024 * 1024
const LINE = 1200 * MiB

/** The report's probe (mk.sh, Appendix B): a oneshot `lines` tool that runs `bash -c CMD`, declaring `bw`. */
function probe(box: string): string {
  const runtime = { sandbox: { fs: { read: ['.'] }, net: 'none', tmp: 'private' } }
  const describe = {
    protocol: 2,
    slug: 'probe',
    description: 'd',
    args: [
      {
        name: 'cmd',
        description: 'c',
        type: 'string',
        backing_type: 'string',
        arity: 'single',
        mode: 'positional',
      },
    ],
    process: { mode: 'oneshot', output: { framing: 'lines' } },
    runtime,
  }
  const path = join(box, 'probe')
  writeFileSync(
    path,
    `#!/bin/bash\nif [ "$1" = describe ]; then cat <<'JSON'\n${JSON.stringify(describe)}\nJSON\nexit 0; fi\nshift; bash -c "$1"\n`,
  )
  chmodSync(path, 0o755)
  return path
}

/** Every file under `root`, with its size. */
function filesUnder(root: string): Array<{ path: string; size: number }> {
  return readdirSync(root, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => {
      const path = join(entry.parentPath, entry.name)
      return { path, size: statSync(path).size }
    })
}

describe.skipIf(!hasBwrap)('F7: a oneshot that writes 1.2 GB through a bwrap tool', () => {
  it('spills at most the 256 MiB cap, and its result says what was not kept', async () => {
    const box = dir('tv-f7-box-')
    const stateDir = dir('tv-f7-state-', 0o700)
    const tool = probe(box)
    const tag = randomUUID()
    const args = JSON.stringify({ cmd: `head -c 1200M /dev/zero | tr "\\0" a; echo` })
    const child = spawn(
      process.execPath,
      [bin, 'call', tool, args, '--sandbox', 'bwrap', '--state-dir', stateDir],
      {
        env: { ...process.env, TV_TEST_TAG: tag },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk))
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve))
    expect(await eventually(() => tagged(tag).length === 0), 'processes left').toBe(true)
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' })

    const largest = Math.max(...filesUnder(stateDir).map((file) => file.size))
    expect(largest).toBeLessThanOrEqual(256 * MiB)
    const kept = 256 * MiB
    expect(stdout).toContain(
      `line of ${LINE} bytes is longer than the 1048576-byte bound: cut (the spill file holds its first ${kept} bytes; the other ${LINE - kept} were not kept: the spill file's cap is ${kept} bytes)`,
    )
  }, 180_000)
})
