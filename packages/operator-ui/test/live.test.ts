import { createMailbox } from '@toolvisor/mailbox'
import type { ManagedProcess } from '@toolvisor/process-runtime'
import { eventually } from '@toolvisor/process-runtime/testing'
import { describe, expect, it } from 'vitest'
import type { StateView } from '../src/index.js'
import { reportedRestarts } from '../src/snapshot.js'
import { type Message, setup, sse } from './helpers.js'

type State = StateView & { now: number }
const states = (messages: readonly Message[]) =>
  messages.filter((m) => m.event === 'state').map((m) => m.data as State)
const latest = (messages: readonly Message[]) => states(messages).at(-1)

/** A script printing `n` events `{"n": i}` and `n` stderr lines `err i`, one of each every `ms` ms. */
const chatty = (n: number, ms: number) =>
  `i=0; while [ $i -lt ${n} ]; do i=$((i+1)); echo "{\\"n\\":$i}"; echo "err $i" >&2; sleep ${ms / 1000}; done`

describe('the state stream', () => {
  it('sends sessions and their tasks with counters at once, then a session that opens and a task that ends as they happen', async () => {
    const { base, bearer, sessions, start, tasks } = await setup()
    sessions.open({ id: 'alpha', origin: 'mcp-http' })
    const busy = start('alpha', chatty(1_000_000, 50))
    const everyone = start(undefined, 'while :; do sleep 1; done')
    // Both launched (a launch settles a moment after start) before the page connects.
    expect(await eventually(() => tasks.all().every((t) => t.lifecycle.status === 'running'))).toBe(true)
    const stream = await sse(`${base}/ui/events`, bearer)
    expect(stream.response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
    expect(await eventually(() => latest(stream.messages) !== undefined)).toBe(true)
    const first = latest(stream.messages)!
    expect(first.control).toBe(false)
    expect(first.sessions.map((s) => [s.id, s.open])).toEqual([
      ['alpha', true],
      ['', false],
    ])
    expect(first.sessions[0]).toMatchObject({ origin: 'mcp-http', omitted: 0 })
    expect(first.sessions[0]!.tasks).toMatchObject([
      { id: busy.id, kind: 'stream', tool: 'sh', status: 'running' },
    ])
    expect(first.sessions[1]!.tasks).toMatchObject([{ id: everyone.id }])
    // The counters move, at most once a second.
    expect(
      await eventually(() => (latest(stream.messages)!.sessions[0]!.tasks[0]!.events ?? 0) > 0, 5000),
    ).toBe(true)
    expect(
      await eventually(() => (latest(stream.messages)!.sessions[0]!.tasks[0]!.stderrBytes ?? 0) > 0),
    ).toBe(true)
    const times = states(stream.messages).map((s) => s.now)
    for (let i = 2; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThan(900)
    // A lifecycle change goes out at once, not at the next second.
    const opened = Date.now()
    sessions.open({ id: 'beta' })
    expect(await eventually(() => latest(stream.messages)!.sessions.some((s) => s.id === 'beta'), 2000)).toBe(
      true,
    )
    expect(Date.now() - opened).toBeLessThan(600)
    const stopped = Date.now()
    await tasks.cancel(busy.id, 'alpha')
    const ended = () => latest(stream.messages)!.sessions[0]!.tasks[0]!
    expect(await eventually(() => ended().exit !== undefined, 2000)).toBe(true)
    expect(Date.now() - stopped).toBeLessThan(1500)
    expect(ended()).toMatchObject({ status: 'exited', exit: { reason: 'cancelled' } })
    expect(ended().endedAt).toBeGreaterThanOrEqual(ended().startedAt)
  })

  it("shows a session's client and its last calls, a oneshot's only trace", async () => {
    const { base, bearer, sessions } = await setup()
    sessions.open({ id: 'alpha', origin: 'mcp-http' })
    sessions.note('alpha', { client: 'claude-code 2.1.197' })
    sessions.note('alpha', { call: { tool: 'word_count', at: Date.now(), ms: 12, error: false } })
    const stream = await sse(`${base}/ui/events`, bearer)
    expect(await eventually(() => latest(stream.messages) !== undefined)).toBe(true)
    expect(latest(stream.messages)!.sessions[0]).toMatchObject({
      client: 'claude-code 2.1.197',
      calls: [{ tool: 'word_count', ms: 12, error: false }],
    })
    // A later call reaches the page with the next counters (within a second or so), no lifecycle change needed.
    sessions.note('alpha', { call: { tool: 'git_lite__log', at: Date.now(), ms: 40, error: true } })
    expect(await eventually(() => latest(stream.messages)!.sessions[0]!.calls?.length === 2, 3000)).toBe(true)
  })
})

describe('a tail', () => {
  it('sends the events and stderr of one process as they come, resumes where a reconnect left off, and ends with the exit', async () => {
    const { base, bearer, sessions, start } = await setup()
    sessions.open({ id: 'alpha' })
    const task = start('alpha', `${chatty(30, 50)}; exit 3`)
    const tail = await sse(`${base}/ui/tail/${task.id}?session=alpha&events=0&stderr=0`, bearer)
    expect(await eventually(() => tail.messages.some((m) => m.event === 'end'), 10_000)).toBe(true)
    const events = tail.messages
      .filter((m) => m.event === 'events')
      .flatMap((m) => (m.data as { events: Array<{ seq: number; text: string }> }).events)
    expect(events.map((e) => e.seq)).toEqual([...Array(30).keys()])
    expect(events.map((e) => JSON.parse(e.text).n)).toEqual([...Array(30).keys()].map((i) => i + 1))
    const stderr = tail.messages
      .filter((m) => m.event === 'stderr')
      .map((m) => (m.data as { text: string }).text)
    expect(stderr.join('')).toBe([...Array(30).keys()].map((i) => `err ${i + 1}\n`).join(''))
    expect(tail.messages.at(-1)).toMatchObject({ event: 'end', data: { exit: { code: 3 } } })
    expect(await eventually(() => tail.ended)).toBe(true)
    // An EventSource that reconnects sends the last id it saw: the tail goes on from there.
    const middle = tail.messages.find((m) => m.event === 'events' && m.id !== undefined)!
    const again = await sse(`${base}/ui/tail/${task.id}?session=alpha`, {
      ...bearer,
      'last-event-id': middle.id!,
    })
    expect(await eventually(() => again.messages.some((m) => m.event === 'end'), 5000)).toBe(true)
    const [from] = middle.id!.split('.').map(Number)
    const resumed = again.messages
      .filter((m) => m.event === 'events')
      .flatMap((m) => (m.data as { events: Array<{ seq: number }> }).events)
    expect(resumed[0]?.seq).toBe(from)
  })

  it('shows a new event within a second while the process runs', async () => {
    const { base, bearer, sessions, start } = await setup()
    sessions.open({ id: 'alpha' })
    // One event a second, stamped with the time it was printed (ms).
    const task = start('alpha', 'while :; do echo "{\\"at\\":$(date +%s%3N)}"; sleep 1; done')
    const tail = await sse(`${base}/ui/tail/${task.id}?session=alpha`, bearer)
    const seen: number[] = []
    tail.messages.length = 0
    const arrived = new Set<object>()
    expect(
      await eventually(() => {
        for (const message of tail.messages) {
          if (message.event !== 'events' || arrived.has(message)) continue
          arrived.add(message)
          for (const event of (message.data as { events: Array<{ text: string }> }).events)
            seen.push(Date.now() - JSON.parse(event.text).at)
        }
        return seen.length >= 3
      }, 10_000),
    ).toBe(true)
    for (const latency of seen) expect(latency).toBeLessThan(1000)
  })

  it('refuses a task of another session or none, as the registry does (404 saying why)', async () => {
    const { base, bearer, sessions, start } = await setup()
    sessions.open({ id: 'alpha' })
    const task = start('alpha', 'sleep 30')
    const foreign = await fetch(`${base}/ui/tail/${task.id}?session=beta`, { headers: bearer })
    expect(foreign.status).toBe(404)
    expect(await foreign.json()).toEqual({ error: `task ${task.id} belongs to another session` })
    const none = await fetch(`${base}/ui/api/page?task=t99&session=alpha`, { headers: bearer })
    expect(await none.json()).toEqual({ error: 'no task t99' })
    const odd = await fetch(`${base}/ui/tail/%3Cscript%3E?session=alpha`, { headers: bearer })
    expect(odd.status).toBe(404)
  })
})

describe('paging back', () => {
  it('reads every event and every stderr byte kept, past the ring and the memory bound (from the spill files)', async () => {
    const { base, bearer, sessions, start, tasks } = await setup()
    sessions.open({ id: 'alpha' })
    const task = start('alpha', chatty(400, 0))
    await tasks.wait(task.id, 'alpha', 20_000)
    const query = `task=${task.id}&session=alpha`
    const seqs: number[] = []
    for (let offset = 0; offset < 400; ) {
      const page = (await (
        await fetch(`${base}/ui/api/page?${query}&offset=${offset}&max=150`, { headers: bearer })
      ).json()) as {
        events: Array<{ seq: number; text: string }>
        next: number
        total: number
        elided: number
      }
      expect(page).toMatchObject({ total: 400, elided: 0 })
      seqs.push(...page.events.map((e) => JSON.parse(e.text).n - 1))
      offset = page.next
    }
    expect(seqs).toEqual([...Array(400).keys()])
    const whole = [...Array(400).keys()].map((i) => `err ${i + 1}\n`).join('')
    let text = ''
    for (let offset = 0; offset < whole.length; ) {
      const run = (await (
        await fetch(`${base}/ui/api/stderr?${query}&offset=${offset}&max=1000`, { headers: bearer })
      ).json()) as {
        from: number
        text: string
        next: number
        total: number
      }
      expect(run).toMatchObject({ from: offset, total: whole.length })
      text += run.text
      offset = run.next
    }
    expect(text).toBe(whole)
  })
})

describe('mail and restarts', () => {
  it('shows the mail waiting for each session and from each of its tasks, when the mailbox is given', async () => {
    const mail = createMailbox()
    const { base, bearer, sessions, start } = await setup({ mail })
    sessions.open({ id: 'alpha' })
    mail.open('alpha')
    const task = start('alpha', 'sleep 30')
    mail.post('alpha', { from: `task:${task.id}`, kind: 'control', body: { n: 1 } })
    mail.post('alpha', { from: `task:${task.id}`, kind: 'control', body: { n: 2 } })
    mail.post('alpha', { from: 'system', kind: 'control', body: {} })
    const stream = await sse(`${base}/ui/events`, bearer)
    expect(await eventually(() => latest(stream.messages) !== undefined)).toBe(true)
    expect(latest(stream.messages)!.sessions[0]).toMatchObject({
      id: 'alpha',
      mail: 3,
      tasks: [{ id: task.id, mail: 2 }],
    })
    mail.deliver('alpha')
    expect(await eventually(() => latest(stream.messages)!.sessions[0]!.mail === 0, 3000)).toBe(true)
    expect(latest(stream.messages)!.sessions[0]!.tasks[0]!.mail).toBe(0)
    mail.dispose()
  })

  it('shows the restarts a process reports (a count, or the list in its facts)', () => {
    const process = { output: { counters: () => ({}) } } as unknown as ManagedProcess
    expect(reportedRestarts(process)).toBeUndefined()
    expect(reportedRestarts(Object.assign(Object.create(process), { restarts: 4 }))).toBe(4)
    const facts = { facts: () => ({ on_exit: 'restart', restarts: [{ restart: 1 }, { restart: 2 }] }) }
    expect(reportedRestarts(Object.assign(Object.create(process), facts))).toBe(2)
  })
})
