// What the task registry gives a background shell (issue 13): chosen ids reused once their task
// ended, byte cursors over stdout and stderr, completions a waiting owner already observed.
import { readFileSync, statSync } from 'node:fs'
import { eventually } from '@toolvisor/process-runtime/testing'
import { describe, expect, it } from 'vitest'
import { createTaskRegistry, type TaskCompletion } from '../src/index.js'
import { makeRuntime, output, tool } from './helpers.js'

/** `sh -c SCRIPT` as a stream process: ready at once, chunks. */
function shell(script: string, resultBytes?: number) {
  return {
    tool: tool('/bin/sh', { process: { mode: 'stream', output: output('chunks') } }),
    argv: ['-c', script],
    ...(resultBytes !== undefined ? { resultBytes } : {}),
  }
}

describe('task registry: chosen ids', () => {
  it('refuses an id a running task holds, takes over one its owner ended, refuses another session', async () => {
    const runtime = makeRuntime()
    const tasks = createTaskRegistry(runtime)
    const start = () => runtime.start(shell('sleep 30'))
    tasks.add({ kind: 'bash', tool: 'bash', owner: 'a', id: 'build', start })
    let started = 0
    const counted = () => {
      started++
      return start()
    }
    expect(() => tasks.add({ kind: 'bash', tool: 'bash', owner: 'a', id: 'build', start: counted })).toThrow(
      'task id build is taken by a task still running; nothing was started',
    )
    await tasks.cancel('build', 'a')
    expect(() => tasks.add({ kind: 'bash', tool: 'bash', owner: 'b', id: 'build', start: counted })).toThrow(
      "task id build is taken by another session's task; nothing was started",
    )
    expect(started).toBe(0)
    const again = tasks.add({
      kind: 'bash',
      tool: 'bash',
      owner: 'a',
      id: 'build',
      start: counted,
      label: 'x',
    })
    expect(started).toBe(1)
    expect(again).toMatchObject({ id: 'build', label: 'x', owner: 'a' })
    expect(tasks.get('build', 'a').exit).toBeUndefined()
    expect(tasks.all().filter((task) => task.id === 'build')).toHaveLength(1)
    await tasks.cancel('build', 'a')
  })
})

describe('task registry: byte cursors', () => {
  it('returns what each reader has not seen of both streams, the newest within max, and counts the rest', async () => {
    const runtime = makeRuntime()
    const tasks = createTaskRegistry(runtime)
    const script = 'printf 0123456789; printf EEE >&2; read line; printf abcdef; printf FF >&2'
    const process = runtime.start({ ...shell(script, 0), stdin: 'open' })
    const task = tasks.add({ kind: 'bash', tool: 'bash', owner: 's', process })
    expect(
      await eventually(
        () => process.output.counters().stdoutBytes === 10 && process.output.counters().stderrBytes === 3,
      ),
    ).toBe(true)
    const first = tasks.readBytes(task.id, 's', { max: 4 })
    expect(first.task.lifecycle.status).toBe('running')
    expect(first.stdout).toMatchObject({ from: 6, skipped: 6, total: 10 })
    expect(first.stdout.bytes.toString()).toBe('6789')
    expect(first.stderr.bytes.toString()).toBe('EEE')
    expect(first.stderr.skipped).toBe(0)
    // Spilled from the first byte (resultBytes 0): the file holds everything.
    expect(readFileSync(first.stdout.spillPath!, 'utf8')).toBe('0123456789')
    expect(statSync(first.stdout.spillPath!).mode & 0o777).toBe(0o600)
    const other = tasks.readBytes(task.id, 's', { reader: 'other', max: 100 })
    expect(other.stdout.bytes.toString()).toBe('0123456789')
    const none = tasks.readBytes(task.id, 's', { max: 4 })
    expect([none.stdout.bytes.length, none.stderr.bytes.length, none.stdout.skipped]).toEqual([0, 0, 0])
    process.closeStdin()
    await tasks.wait(task.id, 's', 10_000)
    const last = tasks.readBytes(task.id, 's', { max: 100 })
    expect(last.task.exit).toMatchObject({ code: 0 })
    expect([last.stdout.bytes.toString(), last.stderr.bytes.toString()]).toEqual(['abcdef', 'FF'])
  })

  it('holds back a character still arriving, and never starts a kept tail inside one', async () => {
    const runtime = makeRuntime()
    const tasks = createTaskRegistry(runtime)
    // "é" is c3 a9, "€" is e2 82 ac: the first half of "é" comes before the read.
    const process = runtime.start({
      ...shell("printf 'ab\\303'; read line; printf '\\251\\342\\202\\254'"),
      stdin: 'open',
    })
    const task = tasks.add({ kind: 'bash', tool: 'bash', owner: 's', process })
    expect(await eventually(() => process.output.counters().stdoutBytes === 3)).toBe(true)
    const first = tasks.readBytes(task.id, 's', { max: 100, utf8: true })
    expect(first.stdout.bytes.toString()).toBe('ab')
    process.closeStdin()
    await tasks.wait(task.id, 's', 10_000)
    // Only the newest 4 bytes fit: "é€" is 5 (its first byte came before), so the cut lands inside "é" and moves to "€".
    const second = tasks.readBytes(task.id, 's', { max: 4, utf8: true })
    expect(second.stdout.bytes.toString()).toBe('€')
    expect(second.stdout).toMatchObject({ skipped: 2, from: 4, total: 7 })
  })
})

describe('task registry: observed completions', () => {
  it('marks a completion its owner was waiting for, and only that one', async () => {
    const runtime = makeRuntime()
    const tasks = createTaskRegistry(runtime)
    const completions: TaskCompletion[] = []
    tasks.onDone((completion) => completions.push(completion))
    const waited = runtime.start({ ...shell('read line'), stdin: 'open' })
    tasks.add({ kind: 'bash', tool: 'bash', owner: 's', id: 'waited', start: () => waited })
    const alone = runtime.start({ ...shell('read line'), stdin: 'open' })
    tasks.add({ kind: 'bash', tool: 'bash', owner: 's', id: 'alone', start: () => alone })
    const byOther = runtime.start({ ...shell('read line'), stdin: 'open' })
    tasks.add({ kind: 'bash', tool: 'bash', id: 'other', start: () => byOther })
    const waiting = tasks.wait('waited', 's', 10_000)
    const otherWaiting = tasks.wait('other', 'someone', 10_000)
    waited.closeStdin()
    byOther.closeStdin()
    await Promise.all([waiting, otherWaiting])
    // Nobody waits on this one: its end is news.
    alone.closeStdin()
    expect(await eventually(() => completions.length === 3)).toBe(true)
    const observed = Object.fromEntries(completions.map((c) => [c.task.id, c.observed]))
    expect(observed).toEqual({ waited: true, other: false, alone: false })
  })
})
