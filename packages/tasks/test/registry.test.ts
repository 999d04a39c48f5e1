import { eventually } from '@toolvisor/process-runtime/testing'
import { describe, expect, it } from 'vitest'
import { createTaskRegistry, type TaskCompletion, TasksError } from '../src/index.js'
import { fixture, makeRuntime, output, tool } from './helpers.js'

const counter = (count: number, ms = 20) => ({
  tool: tool(fixture('slow-events.mjs'), { process: { mode: 'stream', output: output('jsonl') } }),
  argv: ['run', String(count), String(ms)],
})

describe('task registry', () => {
  it('counts each id prefix on its own: t1, bash-1, t2, then bash-3 past the bash-2 already held', async () => {
    const runtime = makeRuntime()
    const tasks = createTaskRegistry(runtime)
    const start = () => runtime.start(counter(0))
    const add = (idPrefix?: string) =>
      tasks.add({ kind: 'stream', tool: 'c', owner: 'alice', start, ...(idPrefix ? { idPrefix } : {}) }).id
    tasks.add({ kind: 'bash', tool: 'c', owner: 'alice', start, id: 'bash-2' })
    expect([add(), add('bash-'), add(), add('bash-'), add('bg-')]).toEqual([
      't1',
      'bash-1',
      't2',
      'bash-3',
      'bg-1',
    ])
    for (const task of tasks.list('alice')) await tasks.cancel(task.id, 'alice')
  })

  it('keeps a deferred task pending until begin: shown, cancellable without a process, then a task as any', async () => {
    const runtime = makeRuntime()
    const tasks = createTaskRegistry(runtime)
    const ends: string[] = []
    tasks.onDone(({ task, exit }) => ends.push(`${task.id} ${exit.reason}`))
    let started = 0
    const start = () => {
      started++
      return runtime.start(counter(2, 5))
    }
    const a = tasks.add({ kind: 'bash', tool: 'c', owner: 'alice', start, deferred: true })
    const b = tasks.add({ kind: 'bash', tool: 'c', owner: 'alice', start, deferred: true })
    expect([a.lifecycle, started]).toEqual([{ status: 'pending' }, 0])
    expect(tasks.list('alice').map((t) => t.lifecycle.status)).toEqual(['pending', 'pending'])
    expect(() => tasks.process(a.id, 'alice')).toThrow(
      `task ${a.id} has no process: it has not started yet (pending)`,
    )
    // A cancel of a pending task ends it at once, cancelled, never started.
    expect(await tasks.cancel(b.id, 'alice')).toMatchObject({
      status: 'exited',
      code: null,
      reason: 'cancelled',
    })
    expect(tasks.get(b.id, 'alice').lifecycle).toEqual({ status: 'exited', code: null, signal: null })
    expect(tasks.begin(b.id)).toBeUndefined()
    expect(ends).toEqual([`${b.id} cancelled`])
    // Begun, it runs and ends as any task.
    expect(tasks.begin(a.id)?.lifecycle.status).toMatch(/^(starting|running)$/)
    expect(tasks.begin(a.id)).toBeUndefined()
    expect((await tasks.wait(a.id, 'alice', 5000)).exit).toMatchObject({ code: 0 })
    expect([started, ends]).toEqual([1, [`${b.id} cancelled`, `${a.id} exit`]])
  })

  it('fences every task by its owner session: no read, stop or list across sessions', async () => {
    const runtime = makeRuntime()
    const tasks = createTaskRegistry(runtime)
    const a = tasks.add({
      kind: 'stream',
      tool: 'counter',
      owner: 'alice',
      process: runtime.start(counter(0)),
    })
    const b = tasks.add({ kind: 'stream', tool: 'counter', owner: 'bob', process: runtime.start(counter(0)) })
    expect([a.id, b.id]).toEqual(['t1', 't2'])
    expect(tasks.list('alice').map((t) => t.id)).toEqual(['t1'])
    expect(tasks.list('bob').map((t) => t.id)).toEqual(['t2'])
    expect(tasks.list(undefined)).toEqual([])
    const foreign = 'task t2 belongs to another session'
    expect(() => tasks.get('t2', 'alice')).toThrow(foreign)
    expect(() => tasks.read('t2', 'alice')).toThrow(foreign)
    expect(() => tasks.page('t2', 'alice', { offset: 0 })).toThrow(foreign)
    await expect(tasks.cancel('t2', 'alice')).rejects.toThrow(foreign)
    await expect(tasks.wait('t2', 'alice', 10)).rejects.toThrow(foreign)
    try {
      tasks.get('t2', undefined)
    } catch (error) {
      expect(TasksError.is(error) && error.code).toBe('TASKS_ERR_FOREIGN_TASK')
    }
    expect(() => tasks.get('t9', 'alice')).toThrow(
      expect.objectContaining({ code: 'TASKS_ERR_UNKNOWN_TASK' }),
    )
    // Bob's task is untouched by Alice's attempts (still starting, or running by now).
    expect(['starting', 'running']).toContain(tasks.get('t2', 'bob').lifecycle.status)
    await tasks.cancel('t1', 'alice')
    await tasks.cancel('t2', 'bob')
  })

  it('shows a task started with no session to every session, and says so', async () => {
    const runtime = makeRuntime()
    const tasks = createTaskRegistry(runtime)
    tasks.add({ kind: 'stream', tool: 'counter', process: runtime.start(counter(3)) })
    for (const session of ['alice', 'bob', undefined]) {
      expect(tasks.list(session).map((t) => [t.id, t.visibility])).toEqual([['t1', 'all sessions']])
    }
    await tasks.wait('t1', 'alice', 5000)
  })

  it('gives each reader its own cursor, and pages by absolute offset', async () => {
    const runtime = makeRuntime()
    const tasks = createTaskRegistry(runtime)
    const task = tasks.add({
      kind: 'stream',
      tool: 'counter',
      owner: 's',
      process: runtime.start(counter(10, 5)),
    })
    const done = await tasks.wait(task.id, 's', 5000)
    expect(done.lifecycle).toEqual({ status: 'exited', code: 0, signal: null })
    const n = (read: { events: readonly { value: unknown }[] }) =>
      read.events.map((e) => (e.value as { n: number }).n)
    expect(n(tasks.read(task.id, 's', { reader: 'one', max: 4 }))).toEqual([0, 1, 2, 3])
    expect(n(tasks.read(task.id, 's', { reader: 'two', max: 2 }))).toEqual([0, 1])
    expect(n(tasks.read(task.id, 's', { reader: 'one', max: 4 }))).toEqual([4, 5, 6, 7])
    expect(n(tasks.read(task.id, 's', { reader: 'two' }))).toEqual([2, 3, 4, 5, 6, 7, 8, 9])
    const last = tasks.read(task.id, 's', { reader: 'one' })
    expect(n(last)).toEqual([8, 9])
    expect(last).toMatchObject({ next: 10, total: 10, elided: 0 })
    expect(n(tasks.read(task.id, 's', { reader: 'one' }))).toEqual([])
    expect(n(tasks.page(task.id, 's', { offset: 3, max: 2 }))).toEqual([3, 4])
  })

  it('reports each completion once through onDone, and cancel returns the exit', async () => {
    const runtime = makeRuntime()
    const tasks = createTaskRegistry(runtime)
    const completions: TaskCompletion[] = []
    const off = tasks.onDone((c) => completions.push(c))
    tasks.add({ kind: 'stream', tool: 'counter', owner: 's', process: runtime.start(counter(2, 5)) })
    const graceful = runtime.start({
      tool: tool('/bin/sh', { process: { mode: 'stream', output: output('lines') } }),
      argv: ['-c', "trap 'echo got-term; exit 42' TERM; echo started; while :; do sleep 0.1; done"],
    })
    const long = tasks.add({ kind: 'stream', tool: 'graceful', owner: 's', process: graceful })
    await tasks.wait('t1', 's', 5000)
    // Its TERM trap is set once it printed its first line.
    expect(await eventually(() => graceful.output.counters().events >= 1)).toBe(true)
    const exit = await tasks.cancel(long.id, 's')
    expect(exit).toMatchObject({ code: 42, reason: 'cancelled' })
    expect(await eventually(() => completions.length === 2)).toBe(true)
    expect(completions.map((c) => [c.task.id, c.exit.code])).toEqual([
      ['t1', 0],
      ['t2', 42],
    ])
    expect(completions[1]!.task.endedAt).toBeInstanceOf(Date)
    off()
  })

  it('returns from wait at the bound while the task still runs', async () => {
    const runtime = makeRuntime()
    const tasks = createTaskRegistry(runtime)
    tasks.add({ kind: 'stream', tool: 'counter', owner: 's', process: runtime.start(counter(0)) })
    const began = Date.now()
    const info = await tasks.wait('t1', 's', 150)
    expect(Date.now() - began).toBeGreaterThanOrEqual(140)
    expect(info.lifecycle.status).toBe('running')
    await tasks.cancel('t1', 's', { force: true })
  })
})
