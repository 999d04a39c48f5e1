import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { StdioTransport } from './stdio-transport.js'

describe('StdioTransport, writing to a client that does not read', () => {
  it('drops progress once answers wait (MCP_ERR_NOTIFICATION_DROPPED), and closes past maxQueuedBytes (MCP_ERR_CLIENT_NOT_READING)', async () => {
    const stdin = new PassThrough()
    // Nothing reads this side: once its small buffers are full, writes wait.
    const stdout = new PassThrough({ highWaterMark: 64 })
    const logs: string[] = []
    const transport = new StdioTransport({
      stdin,
      stdout,
      maxMessageBytes: 1000,
      maxQueuedBytes: 1000,
      log: (line) => logs.push(line),
    })
    let closed = false
    transport.onclose = () => {
      closed = true
    }
    await transport.start()
    const answer = (id: number) => ({ jsonrpc: '2.0' as const, id, result: { text: 'x'.repeat(100) } })
    let id = 0
    while (!stdout.writableNeedDrain) await transport.send(answer(++id))
    const progress = {
      jsonrpc: '2.0' as const,
      method: 'notifications/progress',
      params: { progressToken: 1, progress: 1 },
    }
    await expect(transport.send(progress)).rejects.toMatchObject({
      code: 'MCP_ERR_NOTIFICATION_DROPPED',
      message: expect.stringMatching(
        /^notifications\/progress dropped: \d+ bytes wait for a client that is not reading$/,
      ),
    })
    const refused = async (): Promise<unknown> => {
      for (;;) {
        try {
          await transport.send(answer(++id))
        } catch (error) {
          return error
        }
      }
    }
    expect(await refused()).toMatchObject({
      code: 'MCP_ERR_CLIENT_NOT_READING',
      message: expect.stringMatching(
        /^the client is not reading stdout: \d+ bytes wait for it, over maxQueuedBytes 1000; closing the session$/,
      ),
    })
    expect(closed).toBe(true)
    expect(logs).toEqual([
      expect.stringMatching(
        /^the client is not reading stdout: \d+ bytes wait for it; progress notifications are dropped until it reads$/,
      ),
      expect.stringMatching(
        /^the client is not reading stdout: \d+ bytes wait for it, over maxQueuedBytes 1000; closing the session$/,
      ),
    ])
    // After the close nothing more is written, and nothing throws.
    await transport.send(answer(++id))
  })
})
