/** The as-user helper itself: the command runs with the ordinary user's ids and no capability, and reaches the CLI. */
import type { ChildProcess } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { asUser, asUserSkip, ordinaryUser, seenAs } from './as-user.js'
import { bin } from './helpers.js'

function output(child: ChildProcess): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk))
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk))
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })))
}

describe.skipIf(asUserSkip !== undefined)('as an ordinary user', () => {
  it('runs with the user ids, its home, no capability, and can start the CLI', async () => {
    const user = ordinaryUser()
    const ids = await output(
      asUser('/bin/sh', ['-c', 'id -u; id -g; echo "$HOME"; grep CapEff /proc/self/status; pwd']),
    )
    expect(ids.stderr).toBe('')
    expect(ids.stdout).toBe(
      `${user.uid}\n${user.gid}\n${user.home}\nCapEff:\t0000000000000000\n${user.home}\n`,
    )
    const version = await output(asUser(process.execPath, [seenAs(bin), '--version']))
    expect(version.stderr).toBe('')
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+/)
  })
})
