// Seed 002's flows against the hyperhive profile: run (named, inline wait or detached), status,
// kill of a task whose shell started children (setsid too), timed_out, the completion mail.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { markedProcesses } from '@toolvisor/process-runtime'
import { eventually } from '@toolvisor/process-runtime/testing'
import { describe, expect, it } from 'vitest'
import { BASH_GUIDANCE } from '../src/index.js'
import { compose, tempDir } from './helpers.js'

const until = (file: string) => `for i in $(seq 1 600); do [ -e ${file} ] && break; sleep 0.05; done`
const json = (text: string) => JSON.parse(text) as Record<string, unknown>
/** The id of `task started: id=<id>`: seed 002's auto-generated hex id, 8 digits. */
function startedId(text: string): string {
  expect(text).toMatch(/^task started: id=[0-9a-f]{8}$/)
  return text.slice('task started: id='.length)
}

describe('hyperhive profile (seed 002)', () => {
  it('serves run, status, kill and send, and nothing of the other profiles', async () => {
    const { tools } = await compose({ profile: 'hyperhive' })
    expect(tools.list().map((tool) => tool.name)).toEqual(['processes', 'run', 'status', 'kill', 'send'])
    // Seed 002 has no system-prompt section; seed 001's is dsh's alone.
    expect(tools.guidance?.()).toEqual([])
    const dsh = await compose({ profile: 'dsh' })
    expect(dsh.tools.guidance?.()).toEqual([BASH_GUIDANCE])
    expect(BASH_GUIDANCE.text).toBe(
      'Check the [exit code: N] marker on every bash result; investigate failures before moving on.',
    )
  })

  it('runs a named task that ends within the default 3 s wait: the full status, inline, and no mail', async () => {
    const { call, mail } = await compose({ profile: 'hyperhive' })
    const answer = await call('run', { cmd: 'echo hello; echo warn >&2', name: 'greet' })
    expect(answer.isError).toBe(false)
    const report = json(answer.text)
    expect(report).toEqual({
      id: 'greet',
      status: 'done',
      exit_code: 0,
      duration_secs: expect.any(Number),
      stdout_tail: 'hello\n',
      stderr_tail: 'warn\n',
      stdout_file: expect.stringMatching(/\.stdout$/),
      stderr_file: expect.stringMatching(/\.stderr$/),
    })
    expect(readFileSync(report.stdout_file as string, 'utf8')).toBe('hello\n')
    expect(answer.result.structuredContent).toEqual(report)
    expect(mail()).toEqual([])
    // The name is free again once its task ended.
    expect(json((await call('run', { cmd: 'exit 3', name: 'greet' })).text)).toMatchObject({
      id: 'greet',
      status: 'done',
      exit_code: 3,
    })
  })

  it('detaches a slow command (task started), reports it running, and mails its end once', async () => {
    const { call, mail } = await compose({ profile: 'hyperhive' })
    const go = join(tempDir(), 'go')
    const t1 = startedId(
      (await call('run', { cmd: `echo begun; ${until(go)}; echo finished`, wait_seconds: 0.3 })).text,
    )
    const running = json((await call('status', { id: t1 })).text)
    expect(running).toMatchObject({
      id: t1,
      status: 'running',
      exit_code: null,
      stderr_tail: '',
      stderr_file: null,
    })
    writeFileSync(go, '')
    expect(await eventually(() => mail().length === 1, 20_000)).toBe(true)
    const body = mail()[0]!.body as Record<string, unknown>
    expect(mail()[0]).toMatchObject({ from: `task:${t1}`, kind: 'completion' })
    expect(body).toMatchObject({ id: t1, status: 'done', exit_code: 0, stdout_tail: 'begun\nfinished\n' })
    expect(json((await call('status', { id: t1 })).text)).toMatchObject({ status: 'done', exit_code: 0 })
  })

  it('a status that waits through the end delivers it: no mail follows', async () => {
    const { call, mail } = await compose({ profile: 'hyperhive' })
    const go = join(tempDir(), 'go')
    const t1 = startedId((await call('run', { cmd: `${until(go)}; echo ok`, wait_seconds: 0 })).text)
    const waiting = call('status', { id: t1, wait_seconds: 20 })
    writeFileSync(go, '')
    expect(json((await waiting).text)).toMatchObject({ status: 'done', exit_code: 0, stdout_tail: 'ok\n' })
    expect(mail()).toEqual([])
  })

  it('kill sends SIGINT to the group and returns at once; children and a setsid one are all gone', async () => {
    const { call, tasks, runId } = await compose({ profile: 'hyperhive', killGraceMs: 300 })
    const script = 'sleep 300 & setsid sleep 301 & (sleep 302 &); echo ready; wait'
    const t1 = startedId((await call('run', { cmd: script, wait_seconds: 0 })).text)
    expect(await eventually(() => markedProcesses(runId).length === 4)).toBe(true)
    expect((await call('kill', { id: t1 })).text).toBe(`sent SIGINT to task ${t1}`)
    expect(await eventually(() => markedProcesses(runId).length === 0, 10_000)).toBe(true)
    expect(await eventually(() => tasks.get(t1, 'alice').exit !== undefined)).toBe(true)
    expect(json((await call('status', { id: t1 })).text)).toMatchObject({ status: 'killed' })
    expect((await call('kill', { id: t1 })).text).toBe(`task ${t1} had already finished`)
    const t2 = startedId((await call('run', { cmd: 'trap "" INT; sleep 300', wait_seconds: 0 })).text)
    expect(t2).not.toBe(t1)
    expect((await call('kill', { id: t2, force: true })).text).toBe(`sent SIGKILL to task ${t2}`)
    expect(await eventually(() => tasks.get(t2, 'alice').exit !== undefined)).toBe(true)
    expect(json((await call('status', { id: t2 })).text)).toMatchObject({
      status: 'killed',
      exit_code: null,
      signal: 'SIGKILL',
    })
  })

  it('kills a task after timeout_secs: timed_out', async () => {
    const { call } = await compose({ profile: 'hyperhive' })
    const report = json(
      (await call('run', { cmd: 'echo start; sleep 60', timeout_secs: 0.3, wait_seconds: 20 })).text,
    )
    expect(report).toMatchObject({ status: 'timed_out', stdout_tail: 'start\n' })
  })

  it("refuses bad arguments and another session's task", async () => {
    const { call } = await compose({ profile: 'hyperhive' })
    expect((await call('run', { cmd: '' })).text).toBe('Error: invalid cmd: expected a non-empty string')
    expect((await call('run', { cmd: 'true', timeout_secs: 0 })).text).toBe(
      'Error: invalid timeout_secs: expected a positive number, got 0',
    )
    expect((await call('status', { id: '' })).text).toBe('Error: invalid id: expected a string, got ""')
    expect((await call('kill', { id: 'x', force: 1 })).text).toBe(
      'Error: invalid force: expected a boolean, got 1',
    )
    const t1 = startedId((await call('run', { cmd: 'sleep 30', wait_seconds: 0 }, 'alice')).text)
    for (const [tool, args] of [
      ['status', { id: t1 }],
      ['kill', { id: t1 }],
    ] as const) {
      expect(await call(tool, args, 'bob')).toMatchObject({
        text: `Error: task ${t1} belongs to another session`,
        isError: true,
      })
    }
  })
})
