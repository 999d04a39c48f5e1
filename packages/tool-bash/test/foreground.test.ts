// Seed 001's foreground `bash`: its result texts and markers, asserted exactly.
import { readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { markedProcesses } from '@toolvisor/process-runtime'
import { eventually } from '@toolvisor/process-runtime/testing'
import { describe, expect, it } from 'vitest'
import { compose, tempDir } from './helpers.js'

const bash = (command: string, extra: Record<string, unknown> = {}) => ({
  command,
  description: 'test it',
  ...extra,
})

describe('bash (seed 001), foreground', () => {
  it('returns stdout, then [stderr] and stderr, and (no output) when there is none', async () => {
    const { call } = await compose()
    expect(await call('bash', bash('echo hello'))).toMatchObject({ text: 'hello\n', isError: false })
    expect((await call('bash', bash('echo out; echo err >&2'))).text).toBe('out\n[stderr]\nerr\n')
    expect((await call('bash', bash('printf out; printf err >&2'))).text).toBe('out\n[stderr]\nerr')
    expect((await call('bash', bash('echo err >&2'))).text).toBe('[stderr]\nerr\n')
    expect((await call('bash', bash('true'))).text).toBe('(no output)')
  })

  it('reports a non-zero exit as [exit code: N], not as an error', async () => {
    const { call } = await compose()
    expect(await call('bash', bash('echo partial; exit 3'))).toMatchObject({
      text: 'partial\n[exit code: 3]',
      isError: false,
    })
    expect((await call('bash', bash('printf x; exit 1'))).text).toBe('x\n[exit code: 1]')
    expect((await call('bash', bash('exit 7'))).text).toBe('(no output)\n[exit code: 7]')
  })

  it('shows [timed out after Nms] even when the command traps the stop and exits 0', async () => {
    const { call } = await compose()
    const trapped = await call(
      'bash',
      bash('trap "echo trapped; exit 0" TERM; echo started; sleep 60 & wait', { timeoutMs: 2000 }),
    )
    expect(trapped).toMatchObject({ text: 'started\ntrapped\n[timed out after 2000ms]', isError: false })
    const killed = await call('bash', bash('sleep 60', { timeoutMs: 300 }))
    expect(killed.text).toBe('(no output)\n[timed out after 300ms]\n[killed by signal: SIGTERM]')
  })

  it('cuts a timeout to the cap and applies the default', async () => {
    const { call } = await compose({ maxTimeoutMs: 300, defaultTimeoutMs: 200 })
    expect((await call('bash', bash('sleep 60', { timeoutMs: 10_000_000 }))).text).toBe(
      '(no output)\n[timed out after 300ms]\n[killed by signal: SIGTERM]',
    )
    expect((await call('bash', bash('sleep 60'))).text).toBe(
      '(no output)\n[timed out after 200ms]\n[killed by signal: SIGTERM]',
    )
  })

  it('reports a signal death as [killed by signal: SIG]', async () => {
    const { call } = await compose()
    expect((await call('bash', bash('echo before; kill -KILL $$'))).text).toBe(
      'before\n[killed by signal: SIGKILL]',
    )
    expect((await call('bash', bash('kill -TERM $$'))).text).toBe('(no output)\n[killed by signal: SIGTERM]')
  })

  it('keeps the end of long output and names a spill file (mode 0600) that holds all of it', async () => {
    // 1005 bytes: the newest 1005 start 5 bytes into a line ("line 1900\n" is 10).
    const { call } = await compose({ outputBytes: 1005 })
    const result = await call(
      'bash',
      bash('for i in $(seq 1 2000); do echo "line $i"; done; echo oops >&2; exit 2'),
    )
    const match = /\n\[output truncated; full output: (\/[^\]]+)\]\n\[stderr\]\noops\n\[exit code: 2\]$/.exec(
      result.text,
    )
    expect(match, result.text).not.toBeNull()
    const all = Array.from({ length: 2000 }, (_, i) => `line ${i + 1}\n`).join('')
    const kept = result.text.slice(0, match!.index)
    expect(kept.length).toBeLessThanOrEqual(1005)
    expect(all.endsWith(kept)).toBe(true)
    expect(kept.endsWith('line 2000\n')).toBe(true)
    // The kept tail starts at a line, never in the middle of one.
    expect(kept).toMatch(/^line \d+\n/)
    expect(all.includes(`\n${kept}`)).toBe(true)
    expect(readFileSync(match![1]!, 'utf8')).toBe(all)
    expect(statSync(match![1]!).mode & 0o777).toBe(0o600)
    expect(result.result.meta).toMatchObject({ stdoutSpill: match![1], exitCode: 2 })
  })

  it('starts a cut tail mid-line only when one line fills most of what is kept', async () => {
    const { call } = await compose({ outputBytes: 1000 })
    const long = await call('bash', bash("head -c 5000 /dev/zero | tr '\\0' x; echo; echo end"))
    const kept = long.text.slice(0, long.text.indexOf('\n[output truncated'))
    expect(kept).toMatch(/^x+\nend\n$/)
    expect(kept.length).toBe(1000)
  })

  it('past the spill cap, names the file with what it keeps and says how much it did not (decision 0092)', async () => {
    const { call } = await compose({ outputBytes: 1000 }, { runtime: { spillBytes: 5000 } })
    const result = await call('bash', bash('for i in $(seq 1 2000); do echo "line $i"; done'))
    const all = Array.from({ length: 2000 }, (_, i) => `line ${i + 1}\n`).join('')
    const match =
      /\n\[output truncated; part of it is in (\/\S+): (\d+) bytes past the first 5000 were not kept: the spill file's cap is 5000 bytes\]$/.exec(
        result.text,
      )
    expect(match, result.text).not.toBeNull()
    expect(Number(match![2])).toBe(all.length - 5000)
    expect(readFileSync(match![1]!, 'utf8')).toBe(all.slice(0, 5000))
    // The newest output, from memory.
    const kept = result.text.slice(0, match!.index)
    expect(kept.endsWith('line 2000\n')).toBe(true)
    expect(all.endsWith(kept)).toBe(true)
  })

  it('escapes terminal control codes (decision 0013) unless the operator keeps them', async () => {
    const escaping = await compose()
    expect((await escaping.call('bash', bash("printf '\\033[31mred\\033[0m'"))).text).toBe(
      '\\u001b[31mred\\u001b[0m',
    )
    const keeping = await compose({ keepControls: true })
    expect((await keeping.call('bash', bash("printf '\\033[31mred'"))).text).toBe('\u001b[31mred')
  })

  it("runs in the session's working directory; a relative workdir is resolved against it", async () => {
    const fallback = tempDir()
    const { call, sessions } = await compose({ workdir: fallback })
    expect((await call('bash', bash('pwd'))).text).toBe(`${fallback}\n`)
    const project = tempDir()
    sessions.open({ id: 'carol', cwd: project })
    expect((await call('bash', bash('mkdir sub && pwd'), 'carol')).text).toBe(`${project}\n`)
    expect((await call('bash', bash('pwd', { workdir: 'sub' }), 'carol')).text).toBe(
      `${join(project, 'sub')}\n`,
    )
    expect((await call('bash', bash('pwd', { workdir: '/' }), 'carol')).text).toBe('/\n')
    expect(await call('bash', bash('pwd', { workdir: 'nope' }), 'carol')).toEqual(
      expect.objectContaining({
        isError: true,
        text: `Error: invalid workdir: ${join(project, 'nope')} is not a directory (ENOENT); nothing was started`,
      }),
    )
  })

  it('reads no startup file, and its stdin is a pipe (on a socket bash would take itself for rshd and source ~/.bashrc)', async () => {
    const home = tempDir()
    writeFileSync(join(home, '.bashrc'), 'echo sourced-bashrc\n')
    writeFileSync(join(home, '.bash_profile'), 'echo sourced-profile\n')
    // A top-level shell (no SHLVL), as under turbo: the case bash sources ~/.bashrc in.
    const saved = { HOME: process.env.HOME, SHLVL: process.env.SHLVL }
    process.env.HOME = home
    delete process.env.SHLVL
    try {
      const { call } = await compose()
      expect((await call('bash', bash('echo "$HOME"; [ -p /dev/stdin ] && echo pipe'))).text).toBe(
        `${home}\npipe\n`,
      )
    } finally {
      process.env.HOME = saved.HOME
      if (saved.SHLVL !== undefined) process.env.SHLVL = saved.SHLVL
    }
  })

  it('ends a command the caller cancels: Error: command aborted', async () => {
    const { call, runId } = await compose()
    const abort = new AbortController()
    const running = call('bash', bash('echo started; sleep 60'), 'alice', abort.signal)
    expect(await eventually(() => markedProcesses(runId).length >= 1)).toBe(true)
    abort.abort()
    expect(await running).toMatchObject({ text: 'Error: command aborted', isError: true })
  })
})
