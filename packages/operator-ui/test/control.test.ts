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
        'the operator page is read-only: start toolvisor serve with --ui-control to stop processes, end sessions and type into terminals',
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

  it('type into a terminal task as its owner: in order, logged once per operator and task, never the keys', async () => {
    const { base, bearer, sessions, start, startOnTerminal, tasks, log } = await setup({ control: true })
    sessions.open({ id: 'alpha' })
    // It goes on reading whatever is typed (not canonical: no line to wait for), so that no post
    // waits on a terminal whose input nobody takes (under load, the 2048-emoji posts did).
    const task = startOnTerminal(
      'alpha',
      'read -r a; read -r b; echo "got:$a:$b"; stty -icanon; exec cat >/dev/null',
    )
    const piped = start('alpha', 'sleep 30')
    const process = tasks.process(task.id, 'alpha')
    const shown = () => process.output.bytes('stdout', 0, 1 << 16).toString('utf8')
    const post = (body: unknown) =>
      fetch(`${base}/ui/api/keys`, {
        method: 'POST',
        headers: { ...bearer, ...json, [ACTION_HEADER]: '1' },
        body: JSON.stringify(body),
      })
    const typed = await post({ session: 'alpha', task: task.id, data: 'secret\r' })
    expect(typed.status).toBe(200)
    expect(await typed.json()).toEqual({ task: task.id, typed: 7 })
    expect((await post({ session: 'alpha', task: task.id, data: 'two\r' })).status).toBe(200)
    expect(await eventually(() => shown().includes('got:secret:two'))).toBe(true)
    expect(log).toEqual([
      expect.stringMatching(
        new RegExp(
          `^toolvisor: operator page: bearer token \\(127\\.0\\.0\\.1\\) began to type into ${task.id} \\(sh\\) of session alpha at \\d{4}-`,
        ),
      ),
    ])
    expect(log.join('\n')).not.toContain('secret')
    const foreign = await post({ session: 'beta', task: task.id, data: 'x' })
    expect(foreign.status).toBe(404)
    const notTerminal = await post({ session: 'alpha', task: piped.id, data: 'x' })
    expect(notTerminal.status).toBe(409)
    expect(await notTerminal.json()).toEqual({
      error: `${piped.id} (sh) does not run on a terminal: nothing to type into`,
    })
    const large = await post({ session: 'alpha', task: task.id, data: 'x'.repeat(4097) })
    expect(large.status).toBe(413)
    // The bound is in code units, as the page cuts a paste: 2048 emoji fit, escaped as JSON or not.
    const emoji = '\u{1F600}'.repeat(2048)
    expect((await post({ session: 'alpha', task: task.id, data: emoji })).status).toBe(200)
    const escaped = await fetch(`${base}/ui/api/keys`, {
      method: 'POST',
      headers: { ...bearer, ...json, [ACTION_HEADER]: '1' },
      body: `{"session":"alpha","task":"${task.id}","data":"${'\\ud83d\\ude00'.repeat(2048)}"}`,
    })
    expect(escaped.status).toBe(200)
    expect((await post({ session: 'alpha', task: task.id })).status).toBe(400)
    await tasks.cancel(task.id, 'alpha')
    const ended = await post({ session: 'alpha', task: task.id, data: 'late' })
    expect(ended.status).toBe(409)
    expect(((await ended.json()) as { error: string }).error).toMatch(new RegExp(`^${task.id} \\(sh\\): `))
    expect(log).toHaveLength(1)
  })
})
