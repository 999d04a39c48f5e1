// `serve --keep-processes` (issue 33, decision 0113) beside what `keep-together.test.ts` shows of
// every kind at once: `check --probe` lists what keepers hold while no serve runs, `--reap` ends it
// and the next serve reports it lost once; without the flag nothing is kept.
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { eventually } from '@toolvisor/process-runtime/testing'
import { describe, expect, it } from 'vitest'
import { run, tempDir } from './helpers.js'
import { alive, keepersOf, keptOf, states } from './keep-helpers.js'
import { call, connect, serve } from './serve-helpers.js'

describe('serve --keep-processes', () => {
  it('check --probe lists what keepers hold with no serve; --reap ends it, and the next serve reports it lost to its session, once', async () => {
    const state = tempDir('tv-keep-state-')
    states.push(state)
    const log = join(tempDir('tv-keep-'), 'app.log')
    writeFileSync(log, '')
    const first = await serve(['--keep-processes'], '127.0.0.1:0', {}, { state })
    const alice = (await connect(first.url, first.token, undefined, 'alice')).client
    await call(alice, 'log_watcher', { file: log })
    const pid = keptOf(state).pid
    first.child.kill('SIGKILL')
    await first.exited
    const config = join(state, 'toolvisor.json')
    const listed = await run(['check', '--probe', '--config', config, '--state-dir', state])
    expect(listed.stdout).toMatch(/kept \(1; held by their keepers until a serve --keep-processes/)
    expect(listed.stdout).toContain(`p1 log_watcher, pid ${pid}, session alice`)
    expect(alive(pid)).toBe(true)
    const reaped = await run(['check', '--probe', '--reap', '--config', config, '--state-dir', state])
    expect(reaped.stderr).toMatch(
      /reaped kept p1 \(log_watcher, pid \d+\) of session alice: its keeper and its process group killed/,
    )
    expect(reaped.stdout).toContain('kept: nothing waits for a serve')
    expect(await eventually(() => !alive(pid) && keepersOf(state).length === 0)).toBe(true)
    // The next serve: the session hears it lost, once.
    const second = await serve(['--keep-processes'], '127.0.0.1:0', {}, { state })
    const back = (await connect(second.url, second.token, undefined, 'alice')).client
    expect(await call(back, 'processes', { command: 'list' })).toMatch(
      /"process":"p1"[^}]*"status":"failed: lost on restart"/,
    )
    second.child.kill('SIGTERM')
    expect(await second.exited).toBe(0)
  }, 60_000)

  it('without --keep-processes, SIGTERM stops the service as before, and nothing is kept', async () => {
    const state = tempDir('tv-keep-state-')
    const log = join(tempDir('tv-keep-'), 'app.log')
    writeFileSync(log, '')
    const server = await serve([], '127.0.0.1:0', {}, { state })
    const alice = (await connect(server.url, server.token, undefined, 'alice')).client
    await call(alice, 'log_watcher', { file: log })
    const listed = await call(alice, 'processes', { command: 'list' })
    expect(listed).toMatch(/"process":"p1"/)
    expect(existsSync(join(state, 'keep'))).toBe(false)
    server.child.kill('SIGTERM')
    expect(await server.exited).toBe(0)
    expect(keepersOf(state)).toEqual([])
  }, 60_000)
})
