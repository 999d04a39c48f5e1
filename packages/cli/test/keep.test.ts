// `serve --keep-processes` (issue 33, decision 0113): a service outlives the daemon (kill -9, and
// SIGTERM), the next serve on the same state directory gives it back to its session: the same
// handle and pid, every event printed meanwhile read once in order, its mail not repeated, `send`
// answered, and `stop` leaves nothing.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js'
import { eventually } from '@toolvisor/process-runtime/testing'
import { afterEach, describe, expect, it } from 'vitest'
import { run, tempDir } from './helpers.js'
import { call, connect, serve } from './serve-helpers.js'
import { settled, startTask } from './task-helpers.js'

function alive(pid: number): boolean {
  try {
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ')
  } catch {
    return false
  }
}

function keepersOf(state: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(`${state}/keep/`)
      } catch {
        return false
      }
    })
}

/** The pid of the one kept process of the state directory, from its keeper's record. */
function keptPid(state: string): number {
  const [key] = readdirSync(join(state, 'keep')).filter((name) => /^[0-9a-f]{16}$/.test(name))
  return JSON.parse(readFileSync(join(state, 'keep', key!, 'kept.json'), 'utf8')).pid as number
}

/** The state directories of this file's daemons: what their keepers hold is killed after each test. */
const states: string[] = []
afterEach(() => {
  for (const state of states.splice(0)) {
    for (const keeper of keepersOf(state)) {
      for (const child of childrenOf(keeper)) kill(-child)
      kill(keeper)
    }
  }
})

function kill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL')
  } catch {
    // gone
  }
}

function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number)
  } catch {
    return []
  }
}

/** Asks `check` every 100 ms until it says yes (at most 10 s). */
async function soon(check: () => Promise<boolean>): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    if (await check()) return true
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return false
}

/** What the session was mailed (folded into answers, or read by `wait`): every line, in order. */
const mailed: string[] = []

/** A call's answer body (its first line), the mail folded after it noted in `mailed`. */
async function body(client: Parameters<typeof call>[0], args: Record<string, unknown>) {
  const text = await call(client, 'processes', args)
  const [first, ...rest] = text.split('\n')
  for (const line of rest) mailed.push(...[...line.matchAll(/"line":"([^"]*)"/g)].map((m) => m[1]!))
  return JSON.parse(first!)
}

/** How many kept processes of the state directory have their record written. */
function keptCount(state: string): number {
  const keep = join(state, 'keep')
  return readdirSync(keep).filter((name) => existsSync(join(keep, name, 'kept.json'))).length
}

/** The events of p1 as `processes read` gives them (this reader's next ones), until `until` says enough. */
async function readAll(
  client: Parameters<typeof call>[0],
  until: (lines: string[]) => boolean,
): Promise<string[]> {
  const lines: string[] = []
  for (let i = 0; i < 50 && !until(lines); i++) {
    const read = await body(client, { command: 'read', process: 'p1' })
    lines.push(...(read.events as Array<{ line: string }>).map((event) => event.line))
    if (!until(lines)) await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return lines
}

/** Waits for mail until `line` was mailed. */
async function mailUntil(client: Parameters<typeof call>[0], line: string): Promise<void> {
  for (let i = 0; i < 10 && !mailed.includes(line); i++) {
    const text = await call(client, 'processes', { command: 'wait', timeout_seconds: 3 })
    mailed.push(...[...text.matchAll(/"line":"([^"]*)"/g)].map((m) => m[1]!))
  }
}

describe('serve --keep-processes', () => {
  for (const how of ['SIGKILL', 'SIGTERM'] as const)
    it(`${how} of serve: the next serve gives the service back to its session (same handle and pid), every line once in order, send answered, stop leaves nothing`, async () => {
      const state = tempDir('tv-keep-state-')
      states.push(state)
      const dir = tempDir('tv-keep-')
      const log = join(dir, 'app.log')
      writeFileSync(log, '')
      const first = await serve(['--keep-processes'], '127.0.0.1:0', {}, { state })
      const alice = (await connect(first.url, first.token, undefined, 'alice')).client
      expect(JSON.parse(await call(alice, 'log_watcher', { file: log }))).toMatchObject({ process: 'p1' })
      const pid = keptPid(state)
      expect(alive(pid)).toBe(true)
      writeFileSync(log, 'one\ntwo\n', { flag: 'a' })
      mailed.length = 0
      expect(await readAll(alice, (lines) => lines.includes('two'))).toEqual(['one', 'two'])
      await mailUntil(alice, 'two')

      first.child.kill(how)
      expect(await first.exited).toBe(how === 'SIGTERM' ? 0 : null)
      // No daemon: the service goes on, and what it reports waits in its keeper's files.
      expect(alive(pid)).toBe(true)
      writeFileSync(log, 'three\nfour\n', { flag: 'a' })

      const second = await serve(['--keep-processes'], '127.0.0.1:0', {}, { state })
      expect(second.stderr()).toMatch(/re-adopted kept p1 \(log_watcher, pid \d+\) of session alice/)
      const back = (await connect(second.url, second.token, undefined, 'alice')).client
      const again = await body(back, { command: 'status', process: 'p1' })
      expect(again).toMatchObject({ process: 'p1', status: 'running' })
      expect(again.resumed).toMatch(/^resumed after a restart at /)
      expect(keptPid(state)).toBe(pid)
      // The reader goes on where it was: the lines of the gap, each once, in order.
      const lines = await readAll(back, (seen) => seen.includes('four'))
      expect(lines).toEqual(['three', 'four'])
      // And its whole output is there again, from its first line.
      const whole = await body(back, { command: 'page', process: 'p1', offset: 0 })
      expect((whole.events as Array<{ line: string }>).map((event) => event.line)).toEqual([
        'one',
        'two',
        'three',
        'four',
      ])
      // Its mail: what was mailed before the restart is not mailed again.
      await mailUntil(back, 'four')
      expect(mailed).toEqual(['one', 'two', 'three', 'four'])
      // Its stdin: the same process answers.
      const sent = await call(back, 'log_watcher__send', {
        process: 'p1',
        event: { op: 'pattern', value: 'x' },
      })
      expect(sent).toContain('notice')
      // Another session sees none of it.
      const bob = (await connect(second.url, second.token, undefined, 'bob')).client
      expect(await call(bob, 'processes', { command: 'status', process: 'p1' })).toMatch(/another session/)

      const stopped = await call(back, 'processes', { command: 'stop', process: 'p1' })
      expect(stopped).toMatch(/exited|stopped/)
      expect(await eventually(() => !alive(pid) && keepersOf(state).length === 0, 5000)).toBe(true)
      second.child.kill('SIGTERM')
      expect(await second.exited).toBe(0)
    }, 60_000)

  it('a background bash command printing every 100 ms: kill -9 of serve, the next serve gives it back; bash_output goes on where it was, nothing lost or repeated; bash_kill leaves nothing', async () => {
    const state = tempDir('tv-keep-state-')
    states.push(state)
    const first = await serve(['--keep-processes', '--bash'], '127.0.0.1:0', {}, { state })
    const alice = (await connect(first.url, first.token, undefined, 'alice')).client
    const command = 'i=0; while true; do echo "line $i"; i=$((i+1)); sleep 0.1; done'
    const started = await call(alice, 'bash', { command, description: 'count', run_in_background: true })
    expect(started).toBe('started background task bash-1')
    const numbers = (text: string) => [...text.matchAll(/^line (\d+)$/gm)].map((m) => Number(m[1]))
    const seen: number[] = []
    expect(
      await soon(async () => {
        seen.push(...numbers(await call(alice, 'bash_output', { task_id: 'bash-1' })))
        return seen.length >= 3
      }),
    ).toBe(true)
    const pid = keptPid(state)
    first.child.kill('SIGKILL')
    await first.exited
    // No daemon for a while: it goes on counting into its keeper's files.
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(alive(pid)).toBe(true)
    const second = await serve(['--keep-processes', '--bash'], '127.0.0.1:0', {}, { state })
    expect(second.stderr()).toMatch(/re-adopted kept bash-1 \(bash, pid \d+\) of session alice/)
    const back = (await connect(second.url, second.token, undefined, 'alice')).client
    const before = seen.at(-1)!
    expect(
      await soon(async () => {
        seen.push(...numbers(await call(back, 'bash_output', { task_id: 'bash-1' })))
        return seen.at(-1)! >= before + 8
      }),
    ).toBe(true)
    // Every line from the first, in order, once: the ones printed while no daemon ran included.
    expect(seen).toEqual(seen.map((_, i) => i))
    expect(await call(back, 'bash_kill', { task_id: 'bash-1' })).toBe('killed background task bash-1')
    expect(await eventually(() => !alive(pid) && keepersOf(state).length === 0, 5000)).toBe(true)
    second.child.kill('SIGTERM')
    expect(await second.exited).toBe(0)
  }, 60_000)

  it('a stream followed as a task: kill -9 of serve, the next serve gives it back under its id; read goes on where it was and it ends as it would have', async () => {
    const state = tempDir('tv-keep-state-')
    states.push(state)
    const first = await serve(['--keep-processes'], '127.0.0.1:0', {}, { state })
    const alice = (await connect(first.url, first.token, undefined, 'alice')).client
    expect(JSON.parse(await call(alice, 'counter', { to: 30, 'every-ms': 50 }))).toMatchObject({ task: 't1' })
    const ns: number[] = []
    const follow = async (client: typeof alice) => {
      const read = await body(client, { command: 'read', process: 't1' })
      ns.push(...(read.events as Array<{ n: number }>).map((event) => event.n))
      return read.status as string
    }
    expect(
      await soon(async () => {
        await follow(alice)
        return ns.length >= 3
      }),
    ).toBe(true)
    first.child.kill('SIGKILL')
    await first.exited
    const second = await serve(['--keep-processes'], '127.0.0.1:0', {}, { state })
    expect(second.stderr()).toMatch(/re-adopted kept t1 \(counter, pid \d+\) of session alice/)
    const back = (await connect(second.url, second.token, undefined, 'alice')).client
    expect(await soon(async () => (await follow(back)) === 'exited (0)')).toBe(true)
    // Every event once, in order, the ones of the gap included.
    expect(ns).toEqual(Array.from({ length: 30 }, (_, i) => i + 1))
    expect(await eventually(() => keepersOf(state).length === 0, 5000)).toBe(true)
    second.child.kill('SIGTERM')
    expect(await second.exited).toBe(0)
  }, 60_000)

  it('an MCP task (a stream taken as a task): kill -9 of serve, the client back in its session polls it to completion and fetches its result, every event once', async () => {
    const state = tempDir('tv-keep-state-')
    states.push(state)
    const first = await serve(['--keep-processes'], '127.0.0.1:0', {}, { state })
    const alice = (await connect(first.url, first.token, undefined, 'alice')).client
    const task = await startTask(alice, 'counter', { to: 20, 'every-ms': 100 })
    expect(task).toMatchObject({ taskId: 't1', status: 'working' })
    // Kept once its launch is done (the task is answered before): a daemon that dies mid-launch loses it.
    expect(await eventually(() => existsSync(join(state, 'keep')) && keptCount(state) === 1)).toBe(true)
    first.child.kill('SIGKILL')
    await first.exited
    const second = await serve(['--keep-processes'], '127.0.0.1:0', {}, { state })
    expect(second.stderr()).toMatch(/re-adopted kept t1 \(counter, pid \d+\) of session alice/)
    const back = (await connect(second.url, second.token, undefined, 'alice')).client
    expect(await settled(back, 't1')).toMatchObject({ taskId: 't1', status: 'completed' })
    const result = await back.experimental.tasks.getTaskResult('t1', CallToolResultSchema)
    expect(result.isError).toBe(false)
    // The answer the dead daemon would have built is gone with it: this one is the registry's, and
    // says where the output is; every event is there, once.
    expect(result.structuredContent).toMatchObject({ task: 't1', tool: 'counter', status: 'completed' })
    const read = await body(back, { command: 'read', process: 't1', max: 100 })
    const events = (read.events as Array<{ n: number }>).map((event) => event.n)
    expect(events).toEqual(Array.from({ length: 20 }, (_, i) => i + 1))
    second.child.kill('SIGTERM')
    expect(await second.exited).toBe(0)
  }, 60_000)

  it('check --probe lists what keepers hold with no serve; --reap ends it, and the next serve reports it lost to its session, once', async () => {
    const state = tempDir('tv-keep-state-')
    states.push(state)
    const log = join(tempDir('tv-keep-'), 'app.log')
    writeFileSync(log, '')
    const first = await serve(['--keep-processes'], '127.0.0.1:0', {}, { state })
    const alice = (await connect(first.url, first.token, undefined, 'alice')).client
    await call(alice, 'log_watcher', { file: log })
    const pid = keptPid(state)
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
