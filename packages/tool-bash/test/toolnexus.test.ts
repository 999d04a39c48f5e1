// Seed 004's three example programs, reproduced through our tools against the toolnexus profile
// (calls without a session, as `ToolContext::default()` makes them), with the same outcomes.
import { eventually } from '@toolvisor/process-runtime/testing'
import { describe, expect, it } from 'vitest'
import { compose } from './helpers.js'

const NO_SESSION = undefined

describe('toolnexus profile (seed 004)', () => {
  it('example 1, the smallest useful call: start, wait, read', async () => {
    const { call, host } = await compose({ profile: 'toolnexus' })
    const started = await call('bash', { command: 'echo hello', run_in_background: true }, NO_SESSION)
    expect(started.isError).toBe(false)
    const id = started.result.meta!.backgroundId as string
    // Seed 004's shells are `bg-...` (its own tests probe `bg-nope`).
    expect(id).toBe('bg-1')
    expect(started.text).toBe(
      `Started background shell ${id}. Read it with bash_output; stop it with kill_shell.`,
    )
    expect(await eventually(() => !host.list()[0]!.running)).toBe(true)
    const out = await call('bash_output', { id }, NO_SESSION)
    expect(out.text).toContain('hello')
    expect(out.text).toContain('[status: exited with code 0]')
    expect(out.text).toBe('hello\n[status: exited with code 0]')
    await host.closeAll()
  })

  it('example 2, the realistic case: a long-running command, stopped with kill_shell', async () => {
    const { call, host } = await compose({ profile: 'toolnexus', killGraceMs: 100 })
    const started = await call('bash', { command: 'sleep 30', run_in_background: true }, NO_SESSION)
    const id = started.result.meta!.backgroundId as string
    const running = await call('bash_output', { id }, NO_SESSION)
    expect(running.text).toBe('[status: running]')
    const killed = await call('kill_shell', { id }, NO_SESSION)
    expect(killed.text).toBe(`Killed background shell ${id}`)
    expect((await call('bash_output', { id }, NO_SESSION)).text).toBe('[status: killed]')
    expect((await call('kill_shell', { id }, NO_SESSION)).text).toBe(
      `Background shell ${id} had already exited`,
    )
    await host.closeAll()
  })

  it("example 3, the full surface: the host's view with list, kill and close_all", async () => {
    const { call, host, tools } = await compose({ profile: 'toolnexus', killGraceMs: 100 })
    const names = tools.list().map((tool) => tool.name)
    expect(names).toContain('bash_output')
    expect(names).toContain('kill_shell')
    expect(names).toContain('bash')
    for (const command of ['sleep 30', 'sleep 31']) {
      const result = await call('bash', { command, run_in_background: true }, NO_SESSION)
      expect(result.isError, result.text).toBe(false)
    }
    const list = host.list()
    expect(list).toHaveLength(2)
    expect(list[0]!.running).toBe(true)
    await host.kill(list[0]!.id) // the host's own stop button
    await expect(host.kill('bg-nope')).rejects.toThrow('no task bg-nope')
    await host.closeAll() // on shutdown: stops everything still running
    expect(host.list().every((shell) => !shell.running && shell.killed)).toBe(true)
  })

  it('says exited with code -1 for a signal kill_shell did not send, and N for an exit', async () => {
    const { call, tasks } = await compose({ profile: 'toolnexus' })
    const signalled = await call('bash', { command: 'kill -KILL $$', run_in_background: true })
    const exited = await call('bash', { command: 'echo out; echo err >&2; exit 5', run_in_background: true })
    const [a, b] = [signalled, exited].map((r) => r.result.meta!.backgroundId as string)
    expect(await eventually(() => [a!, b!].every((id) => tasks.get(id, 'alice').exit !== undefined))).toBe(
      true,
    )
    expect((await call('bash_output', { id: a })).text).toBe('[status: exited with code -1]')
    expect((await call('bash_output', { id: b })).text).toBe(
      'out\n[stderr]\nerr\n[status: exited with code 5]',
    )
  })

  it('runs a foreground command with seed 001 markers, and refuses bad input', async () => {
    const { call } = await compose({ profile: 'toolnexus' })
    expect((await call('bash', { command: 'echo hi; exit 2' })).text).toBe('hi\n[exit code: 2]')
    expect((await call('bash', { command: 'sleep 30', timeout: 200 })).text).toBe(
      '(no output)\n[timed out after 200ms]\n[killed by signal: SIGTERM]',
    )
    expect((await call('bash_output', { id: '' })).text).toBe('Error: invalid id: expected a string, got ""')
    expect((await call('kill_shell', {})).text).toBe('Error: invalid id: expected a string, got nothing')
  })
})
