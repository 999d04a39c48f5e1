import { execFile } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

const here = dirname(fileURLToPath(import.meta.url))
const root = resolve(here, '../../..')

describe('docs/guides/mail-in-a-host.md', () => {
  it('its example runs and folds the watcher mail into the next turn', async () => {
    const guide = readFileSync(join(root, 'docs/guides/mail-in-a-host.md'), 'utf8')
    const code = /```js\n([\s\S]*?)```/.exec(guide)?.[1]
    expect(code).toBeDefined()
    // Written inside this package, so that its imports resolve as a host's would.
    const file = join(here, `.guide-${randomUUID()}.mjs`)
    writeFileSync(file, code!)
    try {
      const { stdout } = await promisify(execFile)(process.execPath, [file], { cwd: root, timeout: 60_000 })
      expect(stdout).toMatch(
        /^turn 1, the model started a watcher: \{"process":"p1","tool":"log_watcher","status":"running"/,
      )
      expect(stdout).toContain('the host woke: mail from process:p1')
      expect(stdout).toMatch(
        /turn 2 begins with: \[\n? *'\[mail m1 from process:p1\] \{"file":"[^"]+app\.log","n":1,"line":"ERROR disk full"\}'/,
      )
    } finally {
      rmSync(file, { force: true })
    }
  })
})
