import { describe, expect, it } from 'vitest'
import { describeExit, type ToolProgress } from '../src/index.js'
import { boxWith, compose, ctx, textOf, toolScript, v2Tool } from './helpers.js'

const stream = (slug: string, framing: string, run: string) =>
  toolScript(
    { protocol: 2, slug, description: slug, args: [], process: { mode: 'stream', output: { framing } } },
    run,
  )

describe('one byte budget for every answer', () => {
  it('bounds a stream result by bytes as well as by events, and says how to page the rest', async () => {
    const box = boxWith({
      wide: stream(
        'wide',
        'lines',
        'for i in $(seq 50); do head -c 20000 /dev/zero | tr "\\0" x; echo; done',
      ),
    })
    const { tools } = await compose([box], { resultBytes: 65536 })
    const result = await tools.call('wide', {}, ctx())
    const [body, note] = textOf(result).split('\n')
    expect(JSON.parse(body!)).toEqual(['x'.repeat(20000), 'x'.repeat(20000), 'x'.repeat(20000)])
    expect(Buffer.byteLength(body!)).toBeLessThanOrEqual(65536)
    expect(note).toBe(
      '[47 earlier events elided (a result holds the last 100 events and 65536 bytes at most); ' +
        'the task keeps them: page them with processes {"command":"page","process":"t1","offset":0}]',
    )
    expect(result.structuredContent).toMatchObject({ elided: 47, task: 't1' })
  })

  it('bounds a jsonl oneshot by the same budget and names the call that reads all of stdout', async () => {
    const box = boxWith({
      many: v2Tool('many', { process: {} }, 'for i in $(seq 2000); do echo "{\\"i\\":$i}"; done'),
    })
    const { tools } = await compose([box], { resultBytes: 1000 })
    const result = await tools.call('many', {}, ctx())
    const [body, note] = textOf(result).split('\n')
    const events = JSON.parse(body!) as unknown[]
    expect(Buffer.byteLength(body!)).toBeLessThanOrEqual(1000)
    const process = result.meta?.process as string
    expect(note).toBe(
      `[${2000 - events.length} more events elided: an answer holds 1000 bytes at most; ` +
        `stdout is ${result.meta?.stdoutBytes} bytes, read it with processes {"command":"output","process":"${process}"}]`,
    )
  })

  it('gives binary chunks of a stream as base64, as a oneshot does', async () => {
    const box = boxWith({ bytes: stream('bytes', 'chunks', "printf '\\377\\376\\000\\001'") })
    const { tools } = await compose([box])
    const result = await tools.call('bytes', {}, ctx())
    expect(textOf(result)).toBe('[{"base64":"//4AAQ==","bytes":4}]')
  })
})

/** Every control code the issue names, as a tool prints them (printf escapes). */
const HOSTILE =
  "printf 'a\\033[31mred\\033]52;c;SGVsbG8=\\007 \\033]8;;http://x\\033\\\\link\\302\\233 over\\rwrite \\342\\200\\256evil\\r\\n'"
const SHOWN =
  'a\\u001b[31mred\\u001b]52;c;SGVsbG8=\\u0007 \\u001b]8;;http://x\\u001b\\link\\u009b over\\u000dwrite \\u202eevil\r\n'
const HOSTILE_TOOL = toolScript({ slug: 'hostile', description: 'prints control codes', args: [] }, HOSTILE)

describe('terminal control codes', () => {
  it('reach the model escaped as \\uXXXX: ESC, OSC 52 and OSC 8, C1, a bare \\r, bidi overrides', async () => {
    const box = boxWith({ hostile: HOSTILE_TOOL })
    const { tools } = await compose([box])
    expect(textOf(await tools.call('hostile', {}, ctx()))).toBe(SHOWN)
  })

  it('are JSON escapes in events and in progress, so the values parse back unchanged', async () => {
    const box = boxWith({ hostile: stream('hostile', 'lines', `${HOSTILE}; echo`) })
    const { tools } = await compose([box])
    const progress: ToolProgress[] = []
    const result = await tools.call('hostile', {}, ctx({ progress: (p) => progress.push(p) }))
    const text = textOf(result)
    for (const raw of ['\u001b', '\u009b', '\u202e', '\u0007']) expect(text).not.toContain(raw)
    expect(text).toContain('\\u202eevil')
    expect(progress[0]?.message).toBe(SHOWN.replace('\r\n', ''))
  })

  it('stay raw for a tool the operator lists in keepControls', async () => {
    const box = boxWith({ hostile: HOSTILE_TOOL })
    const { tools } = await compose([{ path: box, keepControls: ['hostile'] }])
    expect(textOf(await tools.call('hostile', {}, ctx()))).toBe(
      'a\u001b[31mred\u001b]52;c;SGVsbG8=\u0007 \u001b]8;;http://x\u001b\\link\u009b over\rwrite \u202eevil\r\n',
    )
  })
})

describe('lines framing with a line over the line bound', () => {
  it('answers the invalid event as JSON in its place, not [object Object]', async () => {
    const box = boxWith({
      long: v2Tool(
        'long',
        { process: { output: { framing: 'lines' } } },
        'head -c 1200000 /dev/zero | tr "\\0" a; echo; echo after',
      ),
    })
    const { tools } = await compose([box])
    const result = await tools.call('long', {}, ctx())
    expect(result.isError).toBe(false)
    const [first, second] = textOf(result).split('\n')
    expect(JSON.parse(first!)).toEqual({
      invalid: true,
      raw: `${'a'.repeat(4096)}…`,
      error:
        'line of 1200000 bytes is longer than the 1048576-byte bound: cut (the spill file holds it whole)',
    })
    expect(second).toBe('after')
  })
})

describe("the caller's input in error messages", () => {
  it('is quoted short, however long it was', async () => {
    const box = boxWith({
      helped: v2Tool('helped', { help: true }, 'true'),
    })
    const { tools } = await compose([box])
    const huge = 'x'.repeat(5 * 1024 * 1024)
    const x60 = 'x'.repeat(60)
    expect(textOf(await tools.call('help', { tool: huge }, ctx()))).toBe(
      `help: no help for "${x60}"… (5242880 characters); tools with help: helped`,
    )
    expect(textOf(await tools.call(huge, {}, ctx()))).toBe(
      `unknown tool "${x60}"… (5242880 characters); the tools are: helped, help`,
    )
  })
})

describe('how an exit reads', () => {
  it('says why first when toolvisor killed the process for a reason of its own', () => {
    const at = new Date()
    const killed = { status: 'exited', code: null, signal: 'SIGKILL', reason: 'exit', at } as const
    expect(describeExit(killed)).toBe('killed by SIGKILL')
    expect(describeExit({ ...killed, why: 'killed by toolvisor: the fork server ended (SIGKILL)' })).toBe(
      'killed by toolvisor: the fork server ended (SIGKILL) (killed by SIGKILL)',
    )
    expect(describeExit({ ...killed, reason: 'cancelled' })).toBe('cancelled (killed by SIGKILL)')
  })
})

describe('without a tool that reads output back (no read-back provider composed)', () => {
  it('says what an answer left out, and names no tool that does not exist', async () => {
    const box = boxWith({
      big: v2Tool('big', {}, 'head -c 100000 /dev/zero | tr "\\0" z'),
      fails: v2Tool('fails', {}, 'head -c 100000 /dev/zero | tr "\\0" z; exit 3'),
      many: v2Tool('many', { process: {} }, 'for i in $(seq 20000); do echo "{\\"i\\":$i}"; done'),
      wide: stream(
        'wide',
        'lines',
        'for i in $(seq 50); do head -c 20000 /dev/zero | tr "\\0" x; echo; done',
      ),
      slow: stream('slow', 'lines', 'echo one; sleep 30'),
    })
    const { tools, oneshots, tasks } = await compose(
      [box],
      // The yield is long enough for `wide` to end within it on a loaded machine; `slow` never does.
      { resultBytes: 65536, yieldMs: 2000 },
      {},
      { readBack: false },
    )
    const answers = [
      await tools.call('big', {}, ctx()),
      await tools.call('fails', {}, ctx()),
      await tools.call('wide', {}, ctx()),
      await tools.call('slow', {}, ctx()),
    ].map(textOf)
    const many = await tools.call('many', {}, ctx())
    expect(answers[0]!.split('\n').at(-1)).toBe('[output truncated: showing the first 65536 of 100000 bytes]')
    expect(answers[1]!.split('\n')[1]).toBe('--- stdout (last 4096 of 100000 bytes) ---')
    expect(answers[2]!.split('\n')[1]).toBe(
      '[47 earlier events elided (a result holds the last 100 events and 65536 bytes at most); the task keeps them]',
    )
    expect(JSON.parse(answers[3]!).message).toBe('still running after 2 s; its events arrive as progress.')
    expect(textOf(many).split('\n')[1]).toMatch(
      /^\[\d+ more events elided: an answer holds 65536 bytes at most; stdout is \d+ bytes\]$/,
    )
    expect(() => oneshots.get('proc-999', 'session-1')).toThrow(
      'no task or oneshot call "proc-999" to read: a oneshot result that was cut names its process (the last 100 are kept)',
    )
    for (const answer of [...answers, textOf(many)]) expect(answer).not.toContain('processes')
    await tasks.cancel('t2', 'session-1')
  })
})
