/**
 * Issue 10: what a tool starts that leaves its process group (`setsid cmd &`) or ignores SIGTERM
 * is gone after a stop and after a normal end, not only after a crash; a declared `{"send": EVENT}`
 * cancel reaches a tool whose stdin also carried its arguments.
 */
import { describe, expect, it } from 'vitest'
import { markedProcesses } from '../src/index.js'
import { fixture, makeRuntime, output, sleep, tool } from './helpers.js'

async function until(condition: () => boolean, ms = 2000): Promise<boolean> {
  const deadline = Date.now() + ms
  while (!condition() && Date.now() < deadline) await sleep(10)
  return condition()
}

describe('escaped descendants', () => {
  it('a stop reaches children that left the group or ignore SIGTERM', async () => {
    const runtime = makeRuntime()
    const proc = runtime.start({
      tool: tool(fixture('escaper.sh'), { process: { mode: 'stream', output: output('lines') } }),
      argv: [],
    })
    const marker = `${runtime.runId}/${proc.id}`
    expect(
      await until(() => proc.output.tail(1)[0]?.value === 'started' && markedProcesses(marker).length >= 4),
    ).toBe(true)
    await proc.stop()
    expect(markedProcesses(marker)).toEqual([])
  })

  it('a normal end reaches them too', async () => {
    const runtime = makeRuntime()
    const proc = runtime.start({ tool: tool(fixture('escaper.sh')), argv: ['exit'] })
    const marker = `${runtime.runId}/${proc.id}`
    expect(await proc.exit).toMatchObject({ code: 0, reason: 'exit' })
    expect(await until(() => markedProcesses(marker).length === 0)).toBe(true)
  })
})

describe('escaped descendants that keep forking', () => {
  it('are all gone after the tool ends, forks made while the sweep read /proc included', async () => {
    const runtime = makeRuntime()
    const proc = runtime.start({ tool: tool(fixture('escaping-forker.sh')), argv: [] })
    const marker = `${runtime.runId}/${proc.id}`
    expect(await proc.exit).toMatchObject({ code: 0, reason: 'exit' })
    // A `sleep 30` forked while the sweep read /proc would be here for half a minute.
    expect(await until(() => markedProcesses(marker).length === 0)).toBe(true)
  })
})

describe('a {"send": EVENT} cancel', () => {
  it('is delivered to a tool whose stdin carried its arguments first', async () => {
    const runtime = makeRuntime()
    const proc = runtime.start({
      tool: tool(fixture('send-cancel.sh'), {
        process: { mode: 'stream', output: output('lines'), input: { framing: 'jsonl' } },
        runtime: { cancel: { send: { op: 'quit' } }, timeout: { stop: 5 } },
      }),
      argv: [],
      stdin: Buffer.from('ada\n'),
    })
    expect(await until(() => proc.output.tail(1)[0]?.value === 'hello ada')).toBe(true)
    const exit = await proc.stop()
    expect(exit).toMatchObject({ code: 0, signal: null, reason: 'cancelled' })
    expect(proc.output.tail(10).map((event) => event.value)).toEqual(['hello ada', 'got-quit'])
  })
})
