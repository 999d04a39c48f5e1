import { createHash } from 'node:crypto'
import { readFileSync, statSync } from 'node:fs'
import { isInvalidEvent } from '@toolvisor/process-output'
import { describe, expect, it } from 'vitest'
import type { SequencedEvent } from '../src/index.js'
import { eventually } from '../src/testing.js'
import { fixture, makeRuntime, output, tool } from './helpers.js'

const decode = (b64: string) => Buffer.from(b64, 'base64').toString('utf8')
/** What produce.mjs writes at byte j in binary mode. */
const expectedByte = (j: number) => ((j % 65536) * 7 + (j - (j % 65536))) & 0xff

describe('launch', () => {
  it('passes argv, stdin bytes and environment exactly, with context variables set last', async () => {
    const runtime = makeRuntime()
    process.env.AGENT_TURN_ID = 'outer-turn'
    try {
      const proc = runtime.start({
        tool: tool(fixture('report.mjs'), { runtime: { environment: { A: 'from-environment', B: 'b' } } }),
        argv: ['run', 'two words', '--flag=x', ''],
        stdin: Buffer.from('line one\nline two\n'),
        env: { A: 'from-arg', REPORT_ENV: 'A,B,AGENT_SESSION_ID,AGENT_TURN_ID,AGENT_AGENT_ID' },
        context: { sessionId: 's-1', agentId: 'agent-7' },
      })
      const exit = await proc.exit
      expect(exit).toMatchObject({ status: 'exited', code: 0, signal: null, reason: 'exit' })
      const report = JSON.parse(proc.output.stdout().head.toString())
      expect(report.argv).toEqual(['run', 'two words', '--flag=x', ''])
      expect(decode(report.stdin)).toBe('line one\nline two\n')
      expect(report.env).toEqual({
        A: 'from-arg',
        B: 'b',
        AGENT_SESSION_ID: 's-1',
        AGENT_TURN_ID: null, // the outer value never leaks into a nested run
        AGENT_AGENT_ID: 'agent-7',
      })
    } finally {
      delete process.env.AGENT_TURN_ID
    }
  })

  it('does not let the tool spoof a context variable through environment', async () => {
    const runtime = makeRuntime()
    const proc = runtime.start({
      tool: tool(fixture('report.mjs'), { runtime: { environment: { AGENT_SESSION_ID: 'spoofed' } } }),
      argv: ['run'],
      env: { REPORT_ENV: 'AGENT_SESSION_ID' },
      context: { sessionId: 'real' },
    })
    await proc.exit
    expect(JSON.parse(proc.output.stdout().head.toString()).env).toEqual({ AGENT_SESSION_ID: 'real' })
  })

  it('reports a missing executable as a failed start, not a throw', async () => {
    const runtime = makeRuntime()
    const proc = runtime.start({ tool: tool('/nonexistent/tool'), argv: ['run'] })
    const exit = await proc.exit
    expect(exit.status).toBe('failed')
    expect(exit.reason).toBe('spawn-failed')
    expect(exit.why).toMatch(/^cannot start \/nonexistent\/tool: .*ENOENT/)
    expect(proc.lifecycle).toEqual({ status: 'failed', why: exit.why })
  })

  it('tolerates a tool that exits before reading its stdin', async () => {
    const runtime = makeRuntime()
    const proc = runtime.start({
      tool: tool('/bin/true'),
      argv: [],
      stdin: Buffer.alloc(4 * 1024 * 1024, 0x61),
    })
    expect(await proc.exit).toMatchObject({ status: 'exited', code: 0 })
  })
})

describe('framing', () => {
  it('frames jsonl into events, turns a non-matching line into an invalid event, never drops it', async () => {
    const runtime = makeRuntime()
    const validate = (value: unknown) =>
      typeof (value as { n?: unknown }).n === 'number' ? undefined : '$.n: must be number'
    const seen: SequencedEvent[] = []
    const proc = runtime.start({
      tool: tool(fixture('events.mjs'), { process: { output: output('jsonl', { validate }) } }),
      argv: ['run', '2', 'invalid', 'notjson', 'blank', 'crlf'],
      onEvent: (event) => seen.push(event),
    })
    await proc.exit
    expect(seen.map((e) => e.value)).toEqual([
      { n: 0 },
      { n: 1 },
      { invalid: true, raw: '{"n":"seven"}', error: 'does not match output.event: $.n: must be number' },
      {
        invalid: true,
        raw: 'this is not json',
        error: expect.stringMatching(/^not JSON: /),
      },
      { invalid: true, raw: '   ', error: 'not JSON: a blank line' },
      { n: 99 },
    ])
    expect(seen.map((e) => e.seq)).toEqual([0, 1, 2, 3, 4, 5])
    expect(proc.output.counters()).toMatchObject({ events: 6, invalidEvents: 3 })
  })

  it('frames lines and chunks', async () => {
    const runtime = makeRuntime()
    const lines = runtime.start({
      tool: tool(fixture('noisy-stderr.sh'), { process: { output: output('lines') } }),
      argv: ['run', '0', '0'],
    })
    await lines.exit
    expect(lines.output.tail(10).map((e) => e.value)).toEqual(['out'])
    const chunks = runtime.start({ tool: tool(fixture('produce.mjs')), argv: ['run', 'binary', '200000'] })
    await chunks.exit
    const bytes = Buffer.concat(chunks.output.read(0, 1000).events.map((e) => e.value as Buffer))
    expect(bytes.length).toBe(200000)
    for (const j of [0, 65535, 65536, 199999]) expect(bytes[j]).toBe(expectedByte(j))
  })

  it('cuts a 10 MB line without a newline into one bounded invalid event', async () => {
    const runtime = makeRuntime()
    const proc = runtime.start({
      tool: tool(fixture('produce.mjs'), { process: { output: output('jsonl') } }),
      argv: ['run', 'oneline', String(10 * 1024 * 1024)],
    })
    await proc.exit
    const events = proc.output.tail(10)
    expect(events).toHaveLength(1)
    const event = events[0]!.value
    expect(isInvalidEvent(event)).toBe(true)
    expect((event as { error: string }).error).toBe(
      'line of 10485760 bytes is longer than the 1048576-byte bound: cut (the spill file holds it whole)',
    )
    expect((event as { raw: string }).raw.length).toBeLessThanOrEqual(4097)
    expect(statSync(proc.output.stdout().spillPath!).size).toBe(10 * 1024 * 1024)
  })

  it('turns binary garbage under jsonl into invalid events', async () => {
    const runtime = makeRuntime()
    const proc = runtime.start({
      tool: tool(fixture('produce.mjs'), { process: { output: output('jsonl') } }),
      argv: ['run', 'binary', '300000'],
    })
    const exit = await proc.exit
    expect(exit.code).toBe(0)
    const counters = proc.output.counters()
    expect(counters.events).toBeGreaterThan(0)
    expect(counters.invalidEvents).toBe(counters.events)
  })
})

describe('output bounds', () => {
  it('bounds a 50 MB stdout, says it was truncated, and the spill file holds every byte', async () => {
    const runtime = makeRuntime()
    const proc = runtime.start({
      tool: tool(fixture('produce.mjs')),
      argv: ['run', 'binary', String(50 * 1024 * 1024)],
    })
    await proc.exit
    const out = proc.output.stdout()
    expect(out.head.length).toBe(256 * 1024)
    expect(out.truncated).toBe(true)
    expect(out.totalBytes).toBe(50 * 1024 * 1024)
    expect(statSync(out.spillPath!).mode & 0o777).toBe(0o600)
    const spilled = readFileSync(out.spillPath!)
    expect(spilled.length).toBe(50 * 1024 * 1024)
    // The head is the spill file's beginning, byte for byte.
    expect(createHash('sha256').update(spilled.subarray(0, out.head.length)).digest('hex')).toBe(
      createHash('sha256').update(out.head).digest('hex'),
    )
    for (let i = 0; i < spilled.length; i += 999_983) expect(spilled[i]).toBe(expectedByte(i))
  })

  it('keeps the last 256 stderr lines in the ring and every byte of stderr', async () => {
    const runtime = makeRuntime()
    const proc = runtime.start({ tool: tool(fixture('noisy-stderr.sh')), argv: ['run', '1000', '3'] })
    const exit = await proc.exit
    expect(exit.code).toBe(3)
    expect(proc.output.stderrLines(1000)).toHaveLength(256)
    expect(proc.output.stderrLines(2)).toEqual(['err line 998', 'err line 999'])
    expect(proc.output.counters().stderrBytes).toBe(proc.output.stderr().totalBytes)
    expect(proc.output.stderr().tail.toString()).toMatch(/err line 999\n$/)
  })

  it('reads events beyond the ring back from the spill file, by absolute offset', async () => {
    const runtime = makeRuntime({ ringEvents: 16, resultBytes: 1024 })
    const proc = runtime.start({
      tool: tool(fixture('produce.mjs'), { process: { output: output('jsonl') } }),
      argv: ['run', 'lines', String(2 * 1024 * 1024)],
    })
    await proc.exit
    const total = proc.output.counters().events
    expect(total).toBeGreaterThan(30000)
    expect(proc.output.counters().elided).toBe(total - 16)
    const early = proc.output.read(5, 3)
    expect(early.events.map((e) => [e.seq, (e.value as { n: number }).n])).toEqual([
      [5, 5],
      [6, 6],
      [7, 7],
    ])
    expect(early.elided).toBe(0)
    const middle = proc.output.read(20_000, 2)
    expect(middle.events.map((e) => (e.value as { n: number }).n)).toEqual([20_000, 20_001])
    const recent = proc.output.read(total - 2, 10)
    expect(recent.events.map((e) => e.seq)).toEqual([total - 2, total - 1])
    expect(recent.next).toBe(total)
  })
})

describe('memory bounds', () => {
  it('bounds the ring by bytes too; older events are read back from the spill file', async () => {
    const runtime = makeRuntime({ ringBytes: 1000, resultBytes: 4096 })
    const proc = runtime.start({
      tool: tool(fixture('produce.mjs'), { process: { output: output('jsonl') } }),
      argv: ['run', 'lines', '200000'],
    })
    await proc.exit
    const total = proc.output.counters().events
    // ~65-byte lines: the ring keeps about 15 events, far fewer than its 256 slots.
    expect(total - proc.output.counters().elided).toBeLessThan(20)
    const last = proc.output.tail(100)
    expect(last.map((e) => (e.value as { n: number }).n)).toEqual(
      Array.from({ length: 100 }, (_, i) => total - 100 + i),
    )
  })

  it('moves finished processes past the retention budget to their spill files; nothing is lost', async () => {
    const runtime = makeRuntime({ retainBytes: 0 })
    const proc = runtime.start({
      tool: tool(fixture('events.mjs'), { process: { output: output('jsonl') } }),
      argv: ['run', '5'],
    })
    await proc.exit
    expect(proc.output.heldBytes()).toBeLessThan(100)
    expect(proc.output.counters().elided).toBe(5)
    expect(proc.output.read(0, 10).events.map((e) => e.value)).toEqual([
      { n: 0 },
      { n: 1 },
      { n: 2 },
      { n: 3 },
      { n: 4 },
    ])
    expect(proc.output.stdout().head.toString()).toBe('{"n":0}\n{"n":1}\n{"n":2}\n{"n":3}\n{"n":4}\n')
  })
})

describe('ready', () => {
  it('takes the matching line as the ready marker, not an event; lines before it are events', async () => {
    const runtime = makeRuntime()
    const proc = runtime.start({
      tool: tool(fixture('listener.mjs'), {
        process: {
          mode: 'service',
          output: output('jsonl'),
          ready: { kind: 'line', match: '^ready$', regex: /^ready$/ },
        },
      }),
      argv: ['run'],
      stdin: 'open',
    })
    expect(proc.lifecycle.status).toBe('starting')
    await proc.ready
    expect(proc.lifecycle.status).toBe('running')
    await proc.write({ op: 'ping' })
    await waitFor(() => proc.output.counters().events === 2)
    expect(proc.output.tail(10).map((e) => e.value)).toEqual([{ phase: 'booting' }, { echo: { op: 'ping' } }])
    await proc.write({ op: 'quit' })
    expect(await proc.exit).toMatchObject({ code: 7 })
    expect(proc.output.counters().stdinEvents).toBe(2)
  })

  it('fails the start when ready does not come in time, with the tails of stdout and stderr', async () => {
    const runtime = makeRuntime()
    const proc = runtime.start({
      tool: tool(fixture('graceful.sh'), {
        process: {
          mode: 'service',
          output: output('lines'),
          ready: { kind: 'line', match: '^never$', regex: /^never$/ },
        },
        runtime: { timeout: { start: 0.3 } },
      }),
      argv: ['run'],
    })
    await expect(proc.ready).rejects.toThrow(
      /did not become ready within 0\.3 s\n--- stdout \(last bytes\) ---\nstarted\n/,
    )
    const exit = await proc.exit
    expect(exit).toMatchObject({
      status: 'failed',
      reason: 'not-ready',
      why: 'did not become ready within 0.3 s',
    })
  })

  it('a oneshot past timeout.start says the timeout elapsed and that it was killed (10.14)', async () => {
    const runtime = makeRuntime()
    const proc = runtime.start({
      tool: tool(fixture('graceful.sh'), { runtime: { timeout: { start: 0.3 } } }),
      argv: ['run'],
    })
    await expect(proc.ready).rejects.toThrow(
      /^graceful\.sh killed: its timeout\.start of 0\.3 s elapsed before it finished\n/,
    )
    expect(await proc.exit).toMatchObject({
      status: 'failed',
      reason: 'not-ready',
      why: 'killed: its timeout.start of 0.3 s elapsed before it finished',
    })
  })

  it('fails the start when the process exits before it was ready', async () => {
    const runtime = makeRuntime()
    const proc = runtime.start({
      tool: tool(fixture('noisy-stderr.sh'), {
        process: {
          mode: 'service',
          output: output('lines'),
          ready: { kind: 'line', match: '^ready$', regex: /^ready$/ },
        },
      }),
      argv: ['run', '1', '5'],
    })
    await expect(proc.ready).rejects.toMatchObject({ code: 'RUNTIME_ERR_NOT_READY' })
    await expect(proc.ready).rejects.toThrow(/exited \(code 5\) before it was ready[\s\S]*err line 0/)
  })
})

describe('stop and cancel', () => {
  it('kills a tool that ignores SIGTERM after timeout.stop, and its grandchildren with it', async () => {
    const runtime = makeRuntime()
    const proc = runtime.start({
      tool: tool(fixture('stubborn.sh'), {
        process: {
          mode: 'service',
          output: output('lines'),
          ready: { kind: 'line', match: '^ready$', regex: /^ready$/ },
        },
        runtime: { timeout: { stop: 0.3 } },
      }),
      argv: ['run'],
    })
    await proc.ready
    const began = Date.now()
    const exit = await proc.stop()
    expect(Date.now() - began).toBeGreaterThanOrEqual(290)
    expect(exit).toMatchObject({ status: 'exited', signal: 'SIGKILL', reason: 'cancelled' })
    // helpers' afterEach asserts that no process of this runtime (grandchildren included) is left.
  })

  it('delivers the declared signal to the tool and returns its own exit code', async () => {
    const runtime = makeRuntime()
    for (const [signal, code, line] of [
      ['SIGTERM', 42, 'got-term'],
      ['SIGINT', 43, 'got-int'],
    ] as const) {
      const proc = runtime.start({
        tool: tool(fixture('graceful.sh'), {
          process: { mode: 'stream', output: output('lines') },
          runtime: { cancel: { signal } },
        }),
        argv: ['run'],
      })
      await waitFor(() => proc.output.counters().events === 1)
      const exit = await proc.stop()
      expect(exit).toMatchObject({ code, reason: 'cancelled' })
      expect(proc.output.tail(5).map((e) => e.value)).toEqual(['started', line])
    }
  })

  it('writes a {send} cancel event first and signals only if the tool does not exit', async () => {
    const runtime = makeRuntime()
    const proc = runtime.start({
      tool: tool(fixture('listener.mjs'), {
        process: {
          mode: 'service',
          output: output('jsonl'),
          ready: { kind: 'line', match: '^ready$', regex: /^ready$/ },
        },
        runtime: { cancel: { send: { op: 'quit' } }, timeout: { stop: 5 } },
      }),
      argv: ['run'],
      stdin: 'open',
    })
    await proc.ready
    const exit = await proc.stop()
    expect(exit).toMatchObject({ code: 7, signal: null, reason: 'cancelled' })
  })

  it('cancels through an AbortSignal', async () => {
    const runtime = makeRuntime()
    const controller = new AbortController()
    const proc = runtime.start({
      tool: tool(fixture('stubborn.sh'), { runtime: { timeout: { stop: 0.2 } } }),
      argv: ['run'],
      signal: controller.signal,
    })
    // Abort once its TERM trap is set (it says ready after), so SIGKILL is what ends it.
    await waitFor(() => proc.output.stdout().head.includes('ready'))
    controller.abort()
    expect(await proc.exit).toMatchObject({ reason: 'cancelled', signal: 'SIGKILL' })
  })

  it('still tracks and stops a tool that closed its stdout', async () => {
    const runtime = makeRuntime()
    const proc = runtime.start({
      tool: tool(fixture('closes-stdout.sh'), { process: { mode: 'stream', output: output('lines') } }),
      argv: ['run'],
    })
    await waitFor(() => proc.output.counters().events === 1)
    // Three beats on stderr after its stdout closed: the end of stdout did not end the process.
    await waitFor(() => proc.output.stderrLines(10).length >= 3)
    expect(proc.lifecycle.status).toBe('running')
    expect(await proc.stop()).toMatchObject({ status: 'exited', reason: 'cancelled' })
  })

  it('stops a process that stays idle longer than timeout.idle', async () => {
    const runtime = makeRuntime()
    const proc = runtime.start({
      tool: tool(fixture('graceful.sh'), {
        process: { mode: 'service', output: output('lines') },
        runtime: { timeout: { idle: 0.3 } },
      }),
      argv: ['run'],
    })
    expect(await proc.exit).toMatchObject({ reason: 'idle', code: 42 })
  })

  it('bounds a run with timeoutMs', async () => {
    const runtime = makeRuntime()
    const proc = runtime.start({ tool: tool(fixture('graceful.sh')), argv: ['run'], timeoutMs: 200 })
    expect(await proc.exit).toMatchObject({ reason: 'timeout', code: 42 })
  })
})

async function waitFor(condition: () => boolean, ms = 5000): Promise<void> {
  if (!(await eventually(condition, ms))) throw new Error('condition not met in time')
}
