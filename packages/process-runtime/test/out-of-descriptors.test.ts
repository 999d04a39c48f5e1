// A host out of file descriptors (EMFILE) and Node's own spawner: every launch fails with a
// reason a person can read, the host lives on, and a launch runs again once descriptors are free.
// Before, Node emitted the spawn's EMFILE on a child nobody listened to, and the host died of it.
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

describe("Node's own spawner out of descriptors", () => {
  it('fails each launch as RUNTIME_ERR_SPAWN_FAILED saying why, never kills the host, and runs again once descriptors are free', () => {
    // Its own process, under a low limit it then exhausts: see the fixture.
    const fixture = join(import.meta.dirname, 'fixtures', 'out-of-descriptors.mjs')
    const run = spawnSync('bash', ['-c', `ulimit -n 512 && exec "${process.execPath}" "${fixture}"`], {
      encoding: 'utf8',
      timeout: 30_000,
    })
    expect(run.status, run.stderr).toBe(0)
    const { failures, out } = JSON.parse(run.stdout)
    expect(failures.length).toBeGreaterThan(0)
    for (const failure of failures)
      expect(failure).toEqual({
        code: 'RUNTIME_ERR_SPAWN_FAILED',
        message:
          'cannot start /bin/echo: this process is out of file descriptors (EMFILE or ENFILE), so nothing was started; it may succeed once others close, or raise the limit (ulimit -n)',
      })
    expect(out).toBe('ok\n')
  })
})
