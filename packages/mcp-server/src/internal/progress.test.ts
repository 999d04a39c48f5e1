import { afterEach, describe, expect, it, vi } from 'vitest'
import { McpServerError } from '../errors.js'
import { CallProgress } from './progress.js'

afterEach(() => {
  vi.useRealTimers()
})

function setup(send: (n: number) => Promise<void> = async () => {}) {
  const sent: number[] = []
  const logs: string[] = []
  const progress = new CallProgress({
    token: 't',
    send: (notification) => {
      sent.push(notification.params.progress)
      return send(notification.params.progress)
    },
    signal: new AbortController().signal,
    log: (line) => logs.push(line),
    perSecond: 10,
    burst: 2,
  })
  const report = (n: number) => progress.report({ progress: n, message: `event ${n}` })
  return { progress, report, sent, logs }
}

// The rate is about time: a fake clock keeps the test from sleeping through it.
describe('CallProgress', () => {
  it('sends a burst, then the latest event when a token comes, and the last one at the end', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] })
    const { progress, report, sent } = setup()
    for (let n = 1; n <= 5; n++) report(n)
    expect(sent).toEqual([1, 2])
    vi.advanceTimersByTime(100)
    expect(sent).toEqual([1, 2, 5])
    report(6)
    report(7)
    expect(sent).toEqual([1, 2, 5])
    expect(await progress.count()).toEqual({ events: 7, sent: 4, dropped: 3 })
    expect(sent).toEqual([1, 2, 5, 7])
    report(8) // after the result: MCP allows no more
    vi.advanceTimersByTime(1000)
    expect(sent).toEqual([1, 2, 5, 7])
  })

  it('counts what the transport drops and goes on; stops, once and logged, when it fails otherwise', async () => {
    const dropped = new McpServerError('MCP_ERR_NOTIFICATION_DROPPED', 'dropped')
    const failing = setup(async (n) => {
      if (n === 1) throw dropped
      if (n === 2) throw new Error('Not connected')
    })
    failing.report(1)
    failing.report(2)
    await new Promise((r) => setImmediate(r))
    failing.report(3)
    expect(failing.sent).toEqual([1, 2])
    expect(await failing.progress.count()).toEqual({ events: 3, sent: 0, dropped: 3 })
    expect(failing.logs).toEqual([
      'a progress notification could not be sent (Not connected); dropping the rest',
    ])
  })

  it('gives no count when every event was sent', async () => {
    const { progress, report } = setup()
    report(1)
    expect(await progress.count()).toBeUndefined()
  })
})
