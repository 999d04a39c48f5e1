import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { type NotifyItem, NotifyQueue } from '../src/notify/queue.js'
import { senderFor } from '../src/notify/transport.js'
import { eventually, tempDir } from './helpers.js'
import { harness } from './notify-helpers.js'
import { call, serve, turn } from './serve-helpers.js'

const item = (key: string, seq: number, padding = 0): NotifyItem => ({
  v: 1,
  key,
  op: 'set',
  state: 'running',
  session: 's',
  ...(padding > 0 ? { summary: 'x'.repeat(padding) } : {}),
  seq,
  at: new Date().toISOString(),
})

/** A queue to `target` with small bounds, and the lines it logged. */
function queueTo(target: Parameters<typeof senderFor>[0], capacity = 4) {
  const lines: string[] = []
  const sender = senderFor(target, 150)
  const queue = new NotifyQueue({
    sender,
    capacity,
    attempts: 2,
    backoffMs: 10,
    log: (line) => lines.push(line),
  })
  return { queue, lines, sender }
}

describe('the notify queue when the harness is down or stalls', () => {
  it('never blocks a put; drops what it cannot send with one line each', async () => {
    // A harness that accepts and never reads: 100 KiB items fill its socket, then each try times out.
    const stalled = await harness('stalled')
    const full = queueTo({ kind: 'unix', path: stalled.path })
    const started = performance.now()
    for (let n = 1; n <= 40; n++) full.queue.put(item(`t${n}`, n, 100 * 1024))
    const putMs = performance.now() - started
    expect(putMs).toBeLessThan(100)
    await full.queue.drained(20_000)
    expect(full.queue.size).toBe(0)
    expect(
      full.lines.some((line) =>
        /: 2 tries failed: the harness did not read within 150 ms \(|queue holds/.test(line),
      ),
    ).toBe(true)
    const dropped = full.lines.map((line) => /item of (t\d+) /.exec(line)?.[1])
    expect(new Set(dropped).size).toBe(dropped.length)
    full.sender.close()
    // Nothing listens.
    const none = queueTo({ kind: 'unix', path: join(tempDir('tv-none-'), 'gone.sock') })
    for (let n = 1; n <= 3; n++) none.queue.put(item(`t${n}`, n))
    await none.queue.drained(5000)
    expect(none.lines).toEqual(
      [1, 2, 3].map((n) =>
        expect.stringContaining(`dropped the running item of t${n} (seq ${n}): 2 tries failed: ENOENT`),
      ),
    )
    // An HTTP harness that never answers.
    const silent = createServer(() => {})
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    const url = new URL(`http://127.0.0.1:${(silent.address() as AddressInfo).port}/items`)
    const hanging = queueTo({ kind: 'http', url })
    hanging.queue.put(item('t1', 1))
    await hanging.queue.drained(5000)
    expect(hanging.lines).toEqual([
      expect.stringMatching(/item of t1 \(seq 1\): 2 tries failed: TimeoutError/),
    ])
    silent.closeAllConnections()
    await new Promise((resolve) => silent.close(resolve))
  }, 30_000)

  it('sends the newest item of a key that changed while it waited, never the ones in between', async () => {
    const reading = await harness()
    const { queue, sender } = queueTo({ kind: 'unix', path: reading.path })
    queue.put(item('t1', 1))
    queue.put({ ...item('t1', 2), state: 'done' })
    queue.put({ ...item('t1', 3), op: 'clear' })
    await queue.drained(5000)
    expect(await eventually(() => reading.items.length === 2)).toBe(true)
    expect(reading.items.map((i) => i.seq)).toEqual([1, 3])
    sender.close()
  })
})

describe('the notify queue over HTTP', () => {
  it('POSTs each item as JSON, and tries again after an error answer', async () => {
    const bodies: Array<{ type: string | undefined; item: NotifyItem }> = []
    let answers = 0
    const harnessHttp = createServer((request, response) => {
      let text = ''
      request.setEncoding('utf8')
      request.on('data', (chunk: string) => (text += chunk))
      request.on('end', () => {
        // The first POST is refused: the queue tries again after its backoff.
        if (answers++ === 0) return void response.writeHead(503).end()
        bodies.push({ type: request.headers['content-type'], item: JSON.parse(text) as NotifyItem })
        response.writeHead(204).end()
      })
    })
    await new Promise<void>((resolve) => harnessHttp.listen(0, '127.0.0.1', resolve))
    const url = new URL(`http://127.0.0.1:${(harnessHttp.address() as AddressInfo).port}/items`)
    const { queue, lines } = queueTo({ kind: 'http', url })
    queue.put(item('t1', 1))
    queue.put(item('t2', 2))
    await queue.drained(5000)
    expect(bodies.map((b) => [b.type, b.item.key, b.item.seq])).toEqual([
      ['application/json', 't1', 1],
      ['application/json', 't2', 2],
    ])
    expect(lines).toEqual([])
    await new Promise((resolve) => harnessHttp.close(resolve))
  })
})

/** The time of each call of `rounds` background runs and their status reads, in ms. */
async function callTimes(notify: string[]): Promise<number[]> {
  const socket = join(tempDir('tv-notify-slow-'), 'serve.sock')
  const server = await serve(notify, `unix:${socket}`, {}, { config: { bash: { profile: 'hyperhive' } } })
  const client = await turn(`unix:${socket}`, server.state, 'agent-1', server.tag)
  const times: number[] = []
  for (let n = 1; n <= 15; n++) {
    for (const [name, args] of [
      ['run', { cmd: 'true', wait_seconds: 0 }],
      ['status', { id: `t${n}`, wait_seconds: 5 }],
    ] as const) {
      const started = performance.now()
      await call(client, name, args)
      times.push(performance.now() - started)
    }
  }
  server.child.kill('SIGTERM')
  expect(await server.exited).toBe(0)
  return times
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

describe('serve --notify to a harness that is down or stalls', () => {
  it('does not slow a tool call', async () => {
    const stalled = await harness('stalled')
    const baseline = await callTimes([])
    const toStalled = await callTimes(['--notify', `unix:${stalled.path}`])
    const toNobody = await callTimes(['--notify', `unix:${join(tempDir('tv-nobody-'), 'none.sock')}`])
    const figures = `median ms: none ${median(baseline).toFixed(1)}, stalled ${median(toStalled).toFixed(1)}, down ${median(toNobody).toFixed(1)}; max ms: ${Math.max(...baseline).toFixed(0)}, ${Math.max(...toStalled).toFixed(0)}, ${Math.max(...toNobody).toFixed(0)}`
    console.log(`notify and call times: ${figures}`)
    expect(stalled.connections(), figures).toBeGreaterThan(0)
    // One try waits 2 s for a harness: a call that waited for one would take that long.
    expect(Math.max(...toStalled, ...toNobody), figures).toBeLessThan(1000)
    expect(median(toStalled) / median(baseline), figures).toBeLessThan(3)
    expect(median(toNobody) / median(baseline), figures).toBeLessThan(3)
  }, 120_000)
})
