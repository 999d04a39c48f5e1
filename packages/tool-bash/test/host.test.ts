// The host's side: list, kill and close a session's background shells (seed 004's host API), the
// `processes` tool's view of them, a session's close and the runtime's shutdown.
import { markedProcesses } from '@toolvisor/process-runtime'
import { eventually } from '@toolvisor/process-runtime/testing'
import { describe, expect, it } from 'vitest'
import { compose } from './helpers.js'

const bg = (command: string) => ({ command, description: 'in the background', run_in_background: true })

describe('background shells, from the host', () => {
  it("lists a session's shells, kills one (fenced when a session is named), closes all of a session's", async () => {
    const { call, host } = await compose()
    await call('bash', bg('sleep 30'), 'alice')
    await call('bash', bg('sleep 31'), 'alice')
    await call('bash', bg('sleep 32'), 'bob')
    const listed = host.list('alice')
    expect(listed.map((s) => [s.id, s.command, s.running, s.exitCode, s.killed, s.owner])).toEqual([
      ['bash-1', 'sleep 30', true, null, false, 'alice'],
      ['bash-2', 'sleep 31', true, null, false, 'alice'],
    ])
    expect(listed[0]!.started).toBeInstanceOf(Date)
    expect(host.list().map((s) => s.id)).toEqual(['bash-1', 'bash-2', 'bash-3'])
    await expect(host.kill('bash-1', 'bob')).rejects.toThrow('task bash-1 belongs to another session')
    await expect(host.kill('bg-nope')).rejects.toThrow('no task bg-nope')
    await host.kill('bash-1')
    expect(host.list('alice')[0]).toMatchObject({ running: false, killed: true, exitCode: -1 })
    await host.kill('bash-1') // already ended: nothing to do
    await host.closeAll('alice')
    expect(host.list('alice').every((s) => !s.running && s.killed)).toBe(true)
    expect(host.list('bob')[0]).toMatchObject({ running: true })
    await host.closeAll()
    expect(host.list().every((s) => !s.running && s.killed)).toBe(true)
  })

  it('shows background shells in `processes list` as kind bash, to their session only', async () => {
    const { call } = await compose()
    await call('bash', bg('sleep 30'), 'alice')
    const list = JSON.parse((await call('processes', { command: 'list' }, 'alice')).text)
    expect(list.processes).toEqual([
      expect.objectContaining({ process: 'bash-1', tool: 'bash', kind: 'bash', status: 'running' }),
    ])
    const bobs = JSON.parse((await call('processes', { command: 'list' }, 'bob')).text)
    expect(bobs.processes).toEqual([])
  })

  it("stops a session's shells when it closes, and leaves the other sessions' running", async () => {
    const { call, sessions, tasks } = await compose()
    await call('bash', bg('sleep 30'), 'alice')
    await call('bash', bg('sleep 30'), 'bob')
    await sessions.close('alice')
    expect(tasks.get('bash-1', 'alice').exit).toMatchObject({ reason: 'cancelled' })
    expect(tasks.get('bash-2', 'bob').exit).toBeUndefined()
  })

  it('stops every background shell when the runtime shuts down: nothing outlives it', async () => {
    const { call, kernel, runId } = await compose()
    await call('bash', bg('sleep 300 & setsid sleep 301 & wait'), 'alice')
    await call('bash', bg('sleep 302'), undefined)
    expect(await eventually(() => markedProcesses(runId).length === 4)).toBe(true)
    await kernel.dispose()
    expect(markedProcesses(runId)).toEqual([])
  })
})
