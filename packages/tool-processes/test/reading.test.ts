import { type ReadBackRequest, ReadBackToken } from '@toolvisor/answers'
import { describe, expect, it } from 'vitest'
import { processesReadBack } from '../src/index.js'
import { compose } from './helpers.js'

const lines = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `line ${from + i}`)

describe('reading everything a task produced', () => {
  it("reads on from the caller's own cursor, pages by offset and tails by count, past the ring", async () => {
    const { call, raw, ended } = await compose()
    await raw('burst', { count: 600 })
    await ended('t1')
    const first = await call('processes', { command: 'read', process: 't1', max: 250 })
    expect(first.body).toMatchObject({ process: 't1', status: 'exited (0)', from: 0, next: 250, total: 600 })
    expect(first.body.events).toEqual(lines(0, 250))
    expect((await call('processes', { command: 'read', process: 't1', max: 250 })).body.events).toEqual(
      lines(250, 500),
    )
    const last = await call('processes', { command: 'read', process: 't1' })
    expect(last.body).toMatchObject({ from: 500, next: 600, events: lines(500, 600) })
    expect((await call('processes', { command: 'read', process: 't1' })).body).toMatchObject({
      from: 600,
      next: 600,
      events: [],
    })
    // Another session's cursor is its own, and it may not read this task at all.
    expect((await call('processes', { command: 'read', process: 't1' }, 'bob')).body).toEqual({
      error: 'task t1 belongs to another session',
    })
    expect(
      (await call('processes', { command: 'page', process: 't1', offset: 10, max: 3 })).body,
    ).toMatchObject({
      from: 10,
      events: ['line 10', 'line 11', 'line 12'],
      next: 13,
    })
    expect((await call('processes', { command: 'tail', process: 't1', n: 3 })).body).toMatchObject({
      from: 597,
      events: ['line 597', 'line 598', 'line 599'],
      next: 600,
    })
  })

  it('takes n and max up to the configured cap, and says the cap when refusing', async () => {
    const { call, raw, ended } = await compose({ maxEvents: 2000 })
    await raw('burst', { count: 1500 })
    await ended('t1')
    const tail = await call('processes', { command: 'tail', process: 't1', n: 1500 })
    expect(tail.body.events).toEqual(lines(0, 1500))
    expect((await call('processes', { command: 'tail', process: 't1', n: 2001 })).body.error).toBe(
      'n must be an integer from 1 to 2000; got 2001',
    )
  })

  it('bounds every answer by the byte budget, cursor and all, and says how to go on', async () => {
    const { call, raw, ended } = await compose({ resultBytes: 2048 })
    await raw('burst', { count: 600 })
    await ended('t1')
    const read = await call('processes', { command: 'read', process: 't1', max: 600 })
    const count = read.body.events.length
    expect(count).toBeGreaterThan(10)
    expect(count).toBeLessThan(600)
    expect(read.body).toMatchObject({
      from: 0,
      next: count,
      note: `${count} of the 600 events fit in an answer of 2048 bytes; go on with processes {"command":"read","process":"t1"}`,
    })
    expect((await call('processes', { command: 'read', process: 't1', max: 1 })).body.events).toEqual([
      `line ${count}`,
    ])
    const tail = await call('processes', { command: 'tail', process: 't1', n: 600 })
    expect(tail.body.next).toBe(600)
    expect(tail.body.note).toBe(
      `${tail.body.events.length} of the 600 events fit in an answer of 2048 bytes; ` +
        'page the earlier ones with processes {"command":"page","process":"t1","offset":0}',
    )
    for (const args of [
      { command: 'list' },
      { command: 'status', process: 't1' },
      { command: 'output', process: 't1' },
      { command: 'page', process: 't1', offset: 0, max: 600 },
    ]) {
      const text = (await raw('processes', args)).content[0]!.text
      expect(text.length).toBeGreaterThan(100)
      expect(Buffer.byteLength(text)).toBeLessThanOrEqual(2048)
    }
  })

  it('escapes control codes in answers as JSON escapes', async () => {
    const { call, raw, ended } = await compose()
    await call('hostile', {})
    await ended('t1')
    const text = (await raw('processes', { command: 'tail', process: 't1' })).content[0]!.text
    expect(text).toContain('"events":["\\u001b[2Jcleared \\u202eevil"]')
  })
})

describe('the output of a oneshot call, by the process its result names', () => {
  it('says which bytes a spill file cut at its cap did not keep, and where the newest are read (decision 0092)', async () => {
    const { raw, call } = await compose({}, {}, {}, { spillBytes: 100_000, tailBytes: 1000 })
    const result = await raw('flood', { size: 300000 })
    const process = result.meta?.process as string
    expect(
      (await call('processes', { command: 'output', process, offset: 99_990, length: 10 })).body,
    ).toEqual({
      process,
      stream: 'stdout',
      offset: 99_990,
      bytes: 10,
      total: 300000,
      next: 100_000,
      text: 'x'.repeat(10),
    })
    expect(await call('processes', { command: 'output', process, offset: 100_000 })).toEqual({
      isError: true,
      body: {
        error: `bytes 100000 on of ${process} stdout are past what its spill file kept (200000 bytes past the first 100000 were not kept: the spill file's cap is 100000 bytes); the newest 1000 are readable from offset 299000`,
      },
    })
    expect((await call('processes', { command: 'output', process, offset: 299_000 })).body).toMatchObject({
      bytes: 1000,
      total: 300000,
    })
  })

  it('pages stdout from the offset the cut result names, for its session only', async () => {
    const { raw, call } = await compose()
    const result = await raw('flood', { size: 300000 })
    const process = result.meta?.process as string
    expect(
      result.content[0]!.text.endsWith(
        `read on with processes {"command":"output","process":"${process}","offset":262144}]`,
      ),
    ).toBe(true)
    const rest = await call('processes', { command: 'output', process, offset: 262144 })
    expect(rest.body).toEqual({
      process,
      stream: 'stdout',
      offset: 262144,
      bytes: 37856,
      total: 300000,
      text: 'x'.repeat(37856),
    })
    const part = await call('processes', { command: 'output', process, offset: 10, length: 5 })
    expect(part.body).toEqual({
      process,
      stream: 'stdout',
      offset: 10,
      bytes: 5,
      total: 300000,
      next: 15,
      text: 'xxxxx',
    })
    expect((await call('processes', { command: 'output', process }, 'bob')).body).toEqual({
      error: `task ${process} belongs to another session`,
    })
    expect((await call('processes', { command: 'output', process: 'proc-999' })).body).toEqual({
      error:
        'no task or oneshot call "proc-999" to read: processes {"command":"list"} lists the tasks, ' +
        'and a oneshot result that was cut names its process (the last 100 are kept)',
    })
  })

  it('reads the stderr of a task too', async () => {
    const { call, raw, ended } = await compose()
    await raw('burst', { count: 3 })
    await ended('t1')
    expect((await call('processes', { command: 'output', process: 't1', stream: 'stderr' })).body).toEqual({
      process: 't1',
      stream: 'stderr',
      offset: 0,
      bytes: 5,
      total: 5,
      text: 'done\n',
    })
  })
})

describe("the caller's input in errors", () => {
  it('is quoted short, however long it was', async () => {
    const { raw } = await compose()
    const huge = 'k'.repeat(5 * 1024 * 1024)
    for (const args of [
      { command: huge },
      { command: 'status', process: huge },
      { command: 'tail', process: 't1', n: huge },
    ]) {
      const text = (await raw('processes', args)).content[0]!.text
      expect(text.length).toBeLessThan(300)
      expect(JSON.parse(text).error).toContain(`"${'k'.repeat(60)}"… (5242880 characters)`)
    }
  })
})

describe('the read-back words (what other packages’ answers name)', () => {
  it('are calls the processes tool takes, whole, for every request an answer can name', async () => {
    const { kernel, call, raw, ended } = await compose()
    const readBack = kernel.get(ReadBackToken)!
    expect(readBack).toBe(processesReadBack)
    await raw('burst', { count: 3 })
    await ended('t1')
    const requests: ReadBackRequest[] = [
      { command: 'output', process: 't1' },
      { command: 'output', process: 't1', stream: 'stderr', offset: 2 },
      { command: 'output', process: 't1', stream: 'stdout', offset: 0 },
      { command: 'read', process: 't1' },
      { command: 'page', process: 't1', offset: 0 },
      { command: 'status', process: 't1' },
      { command: 'list' },
      { command: 'wait', timeout_seconds: 0 },
      { command: 'stop', process: 't1' },
    ]
    expect(requests.map((r) => readBack.call(r))).toEqual([
      'processes {"command":"output","process":"t1"}',
      'processes {"command":"output","process":"t1","stream":"stderr","offset":2}',
      'processes {"command":"output","process":"t1"}',
      'processes {"command":"read","process":"t1"}',
      'processes {"command":"page","process":"t1","offset":0}',
      'processes {"command":"status","process":"t1"}',
      'processes {"command":"list"}',
      'processes {"command":"wait","timeout_seconds":0}',
      'processes {"command":"stop","process":"t1"}',
    ])
    for (const request of requests) {
      const [tool, args] = readBack.call(request).split(/ (.*)/s)
      expect(JSON.parse(args!)).toEqual(JSON.parse(readBack.args(request)))
      const answer = await call(tool!, JSON.parse(args!))
      expect(answer.body.error, `${tool} ${args}`).toBeUndefined()
    }
  })
})
