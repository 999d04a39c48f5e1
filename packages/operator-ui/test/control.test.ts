import { eventually } from '@toolvisor/process-runtime/testing'
import { describe, expect, it } from 'vitest'
import { ACTION_HEADER } from '../src/control.js'
import { setup } from './helpers.js'

const json = { 'content-type': 'application/json' }

describe('actions', () => {
  it('are refused on a read-only page (403), whoever asks', async () => {
    const { base, bearer, sessions, start, tasks } = await setup()
    sessions.open({ id: 'alpha' })
    const task = start('alpha', 'sleep 30')
    const response = await fetch(`${base}/ui/api/stop`, {
      method: 'POST',
      headers: { ...bearer, ...json, [ACTION_HEADER]: '1' },
      body: JSON.stringify({ session: 'alpha', task: task.id }),
    })
    expect(response.status).toBe(403)
    expect(await response.json()).toEqual({
      error:
        'the operator page is read-only: start toolvisor serve with --ui-control to stop processes and end sessions',
    })
    expect(tasks.get(task.id, 'alpha').exit).toBeUndefined()
  })

  it("need the page's header and a JSON body: a form posted from anywhere cannot act", async () => {
    const { base, bearer, sessions, start, tasks } = await setup({ control: true })
    sessions.open({ id: 'alpha' })
    const task = start('alpha', 'sleep 30')
    const body = JSON.stringify({ session: 'alpha', task: task.id })
    const bare = await fetch(`${base}/ui/api/stop`, { method: 'POST', headers: { ...bearer, ...json }, body })
    expect(bare.status).toBe(403)
    expect(await bare.json()).toEqual({ error: "an action needs the page's x-toolvisor-ui header" })
    const form = await fetch(`${base}/ui/api/stop`, {
      method: 'POST',
      headers: { ...bearer, [ACTION_HEADER]: '1', 'content-type': 'application/x-www-form-urlencoded' },
      body: `session=alpha&task=${task.id}`,
    })
    expect(form.status).toBe(403)
    const empty = await fetch(`${base}/ui/api/stop`, {
      method: 'POST',
      headers: { ...bearer, ...json, [ACTION_HEADER]: '1' },
      body: '{"session": "alpha"}',
    })
    expect(empty.status).toBe(400)
    expect(tasks.get(task.id, 'alpha').exit).toBeUndefined()
  })

  it('stop a task with its declared cancel through the registry, as its owner; logged with who and when', async () => {
    const { base, bearer, sessions, start, tasks, log } = await setup({ control: true })
    sessions.open({ id: 'alpha' })
    // The declared cancel (SIGTERM) runs the script's trap: the exit code proves it came.
    const task = start('alpha', `trap "exit 7" TERM; echo '{"trap":"set"}'; while :; do sleep 0.1; done`)
    expect(await eventually(() => tasks.process(task.id, 'alpha').output.counters().events === 1)).toBe(true)
    const post = (body: unknown) =>
      fetch(`${base}/ui/api/stop`, {
        method: 'POST',
        headers: { ...bearer, ...json, [ACTION_HEADER]: '1' },
        body: JSON.stringify(body),
      })
    const foreign = await post({ session: 'beta', task: task.id })
    expect(foreign.status).toBe(404)
    expect(await foreign.json()).toEqual({ error: `task ${task.id} belongs to another session` })
    const stopped = await post({ session: 'alpha', task: task.id })
    expect(stopped.status).toBe(200)
    expect(await stopped.json()).toMatchObject({ task: task.id, exit: { code: 7, reason: 'cancelled' } })
    expect(tasks.get(task.id, 'alpha').exit).toMatchObject({ code: 7 })
    expect(log).toEqual([
      expect.stringMatching(
        new RegExp(
          `^toolvisor: operator page: bearer token \\(127\\.0\\.0\\.1\\) asked to stop ${task.id} \\(sh\\) of session alpha at \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z$`,
        ),
      ),
      `toolvisor: operator page: ${task.id} ended (code 7, cancelled)`,
    ])
  })

  it('end a session through sessions.close: everything it owns stops; logged', async () => {
    const { base, bearer, sessions, start, tasks, log } = await setup({ control: true })
    sessions.open({ id: 'alpha' })
    const owned = [start('alpha', 'sleep 30'), start('alpha', 'sleep 30')]
    const post = (session: string) =>
      fetch(`${base}/ui/api/end`, {
        method: 'POST',
        headers: { ...bearer, ...json, [ACTION_HEADER]: '1' },
        body: JSON.stringify({ session }),
      })
    expect((await post('nobody')).status).toBe(404)
    const ended = await post('alpha')
    expect(ended.status).toBe(200)
    expect(await ended.json()).toEqual({ session: 'alpha', ended: true })
    expect(sessions.get('alpha')).toBeUndefined()
    for (const task of owned) expect(tasks.get(task.id, 'alpha').exit).toMatchObject({ reason: 'cancelled' })
    expect(log[0]).toMatch(
      /^toolvisor: operator page: bearer token \(127\.0\.0\.1\) asked to end session alpha at \d{4}-/,
    )
  })
})

describe('streams', () => {
  it('are bounded: past maxStreams a new one is answered 503, and a closed one frees its place', async () => {
    const { base, bearer } = await setup({ maxStreams: 2 })
    const open = [new AbortController(), new AbortController()]
    for (const controller of open) {
      const response = await fetch(`${base}/ui/events`, { headers: bearer, signal: controller.signal })
      expect(response.status).toBe(200)
    }
    const third = await fetch(`${base}/ui/events`, { headers: bearer })
    expect(third.status).toBe(503)
    open[0]!.abort()
    let status = 0
    for (let i = 0; i < 100 && status !== 200; i++) {
      const controller = new AbortController()
      const response = await fetch(`${base}/ui/events`, { headers: bearer, signal: controller.signal })
      status = response.status
      controller.abort()
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 20))
    }
    expect(status).toBe(200)
    open[1]!.abort()
  })
})
