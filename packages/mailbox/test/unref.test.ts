import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

const dist = fileURLToPath(new URL('../dist/index.js', import.meta.url))

describe('digest timers', () => {
  it('do not keep a process alive: a pending seconds digest of an hour, or events one bounded by an hour, lets node exit', async () => {
    // A real process, because only a real event loop shows whether a timer is unref'd.
    const script = `
      import { createMailbox } from ${JSON.stringify(dist)}
      const mailbox = createMailbox({ digestFlushMs: 3_600_000 })
      mailbox.open('s1')
      mailbox.source('s1', 'process:p1', { per: 'seconds', n: 3600 }).push({ line: 'pending' })
      mailbox.source('s1', 'process:p3', { per: 'events', n: 3 }).push({ line: 'pending' })
      console.log(JSON.stringify(mailbox.source('s1', 'process:p2', { per: 'seconds', n: 1 }).counters()))
    `
    expect(existsSync(dist), `${dist} is missing: build the package first (pnpm build)`).toBe(true)
    const started = Date.now()
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
      timeout: 20_000,
    })
    expect(JSON.parse(stdout)).toEqual({ events: 0, mailed: 0, pending: 0, pendingBytes: 0, envelopes: 0 })
    expect(Date.now() - started).toBeLessThan(20_000)
  })
})
