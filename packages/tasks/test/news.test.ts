import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { deadRun, eventually } from '@toolvisor/process-runtime/testing'
import { describe, expect, it } from 'vitest'
import { createTaskRegistry, type TaskInfo, type TaskNews } from '../src/index.js'
import { fixture, makeRuntime, output, tempDir, tool } from './helpers.js'

const events = (count: number, ms = 20) => ({
  tool: tool(fixture('slow-events.mjs'), { process: { mode: 'stream', output: output('jsonl') } }),
  argv: ['run', String(count), String(ms)],
})

const shown = (news: TaskNews[]) =>
  news.map((n) => `${n.task.id} ${n.type}${n.type === 'ended' && n.observed ? ' observed' : ''}`)

describe('task news', () => {
  it('says detached once, ended with observed when the owner waited, and seen once, to the owner only', async () => {
    const runtime = makeRuntime()
    const tasks = createTaskRegistry(runtime)
    const news: TaskNews[] = []
    tasks.onNews((n) => news.push(n))
    tasks.onNews(() => {
      throw new Error('a listener bug hides nothing')
    })
    const a = tasks.add({ kind: 'stream', tool: 'events', owner: 'alice', process: runtime.start(events(3)) })
    tasks.detach(a.id)
    tasks.detach(a.id)
    tasks.seen(a.id, 'alice') // still running: nothing to see
    expect(await eventually(() => news.length === 2)).toBe(true)
    tasks.seen(a.id, 'bob')
    tasks.seen(a.id, 'alice')
    tasks.seen(a.id, 'alice')
    const b = tasks.add({ kind: 'stream', tool: 'events', owner: 'alice', process: runtime.start(events(2)) })
    await tasks.wait(b.id, 'alice', 5000)
    tasks.detach(b.id) // ended before its call answered: never detached
    expect(shown(news)).toEqual(['t1 detached', 't1 ended', 't1 seen', 't2 ended observed'])
  })
})

/** A run directory as a run that died leaves it: an owner that is gone, and its process log. */
describe('lost tasks', () => {
  it('are told to their owner once, across restarts; a tell that fails is told again', () => {
    const stateDir = tempDir('tv-told-')
    const at = new Date().toISOString()
    deadRun(stateDir, 'dead-1', [
      { op: '+', id: 'proc-1', pid: 2 ** 22 + 2, start: '1', tool: 'watcher', at },
      { op: '@', id: 'proc-1', task: 'p1', session: 'agent-1', kind: 'service' },
      { op: '+', id: 'proc-2', pid: 2 ** 22 + 3, start: '1', tool: 'bash', at },
      { op: '@', id: 'proc-2', task: 't1', session: 'agent-1', kind: 'bash' },
      { op: '+', id: 'proc-3', pid: 2 ** 22 + 4, start: '1', tool: 'watcher', at },
      { op: '@', id: 'proc-3', task: 'p1', session: 'agent-2', kind: 'service' },
    ])
    const told: string[] = []
    const tell = (session: string) => (task: TaskInfo) => told.push(`${session} ${task.id} ${task.kind}`)
    const first = createTaskRegistry(makeRuntime({ stateDir }))
    const news: TaskNews[] = []
    first.onNews((n) => news.push(n))
    expect(() =>
      first.tellLost('agent-2', () => {
        throw new Error('the mailbox could not take it')
      }),
    ).toThrow('the mailbox could not take it')
    first.tellLost('agent-1', tell('agent-1'))
    first.tellLost('agent-1', tell('agent-1'))
    expect(told).toEqual(['agent-1 p1 service', 'agent-1 t1 bash'])
    expect(shown(news)).toEqual(['p1 ended', 't1 ended'])
    expect(JSON.parse(readFileSync(join(stateDir, 'runs', 'dead-1', 'told.json'), 'utf8'))).toEqual([
      'proc-1',
      'proc-2',
    ])
    const second = createTaskRegistry(makeRuntime({ stateDir }))
    second.tellLost('agent-1', tell('agent-1'))
    second.tellLost('agent-2', tell('agent-2'))
    second.tellLost('agent-2', tell('agent-2'))
    expect(told).toEqual(['agent-1 p1 service', 'agent-1 t1 bash', 'agent-2 p1@dead-1 service'])
    // Still listed as lost for their owner, told or not.
    expect(second.list('agent-1').map((t) => [t.id, t.lifecycle.status])).toEqual([
      ['p1', 'failed'],
      ['t1', 'failed'],
    ])
  })
})
