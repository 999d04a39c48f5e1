import { describe, expect, it } from 'vitest'
import { groupAlive, groups } from './helpers.js'
import { runFixture } from './stdio-helpers.js'

const hello = (id: unknown, who: string) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'say__hello', arguments: { who } },
})

const refusal = (id: unknown, bytes: number, limit: number) => ({
  jsonrpc: '2.0',
  id,
  error: {
    code: -32600,
    message: `Invalid Request: the message is ${bytes} bytes, over the limit of ${limit} bytes (maxMessageBytes); it was discarded unread`,
    data: { bytes, maxMessageBytes: limit },
  },
})

describe('a message over maxMessageBytes', () => {
  it('over the 10 MiB default: a -32600 answer with the id an SDK client puts last, and the session goes on', async () => {
    const server = runFixture()
    await server.initialize()
    server.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'sleeper' } })
    const pgid = Number((await server.stderr.waitFor(/sleep-pgid (\d+)/))[1])
    groups.add(pgid)
    // The SDK client serializes { method, params, jsonrpc, id }: the id comes after the big params.
    const { id: _, ...rest } = hello(7, 'x'.repeat(10 * 1024 * 1024))
    const line = JSON.stringify({ ...rest, id: 7 })
    server.write(`${line}\n`)
    server.send(hello(8, 'bo'))
    const answer = await server.waitForMessage((m) => m.id === 8, 'the answer to the call after it')
    expect(answer.result).toEqual({
      content: [{ type: 'text', text: 'hello bo from stdio-session' }],
      isError: false,
    })
    expect(server.messages().find((m) => m.id === 7)).toEqual(
      refusal(7, Buffer.byteLength(line), 10 * 1024 * 1024),
    )
    expect(groupAlive(pgid)).toBe(true)
    server.child.stdin.end()
    expect(await server.exited).toBe(0)
    expect(groupAlive(pgid)).toBe(false)
    expect(server.stderr.text()).toContain(
      `fixture: refused a message: Invalid Request: the message is ${Buffer.byteLength(line)} bytes, over the limit of 10485760 bytes (maxMessageBytes); it was discarded unread\n`,
    )
  })

  it('with options.maxMessageBytes: a line of exactly the limit is served, one byte more is refused, with the id when it is first or last, else null', async () => {
    const limit = 1000
    const server = runFixture({ maxMessageBytes: limit })
    await server.initialize()
    const sized = (message: object, bytes: number, key = 'who'): string => {
      const text = JSON.stringify(message)
      const filled = text.replace(`"${key}":"`, `"${key}":"${'y'.repeat(bytes - Buffer.byteLength(text))}`)
      expect(Buffer.byteLength(filled)).toBe(bytes)
      return filled
    }
    server.write(`${sized(hello(1, ''), limit)}\n`)
    server.write(`${sized(hello('first', ''), limit + 1)}\r\n`)
    const { jsonrpc, id, ...body } = hello(3, '')
    server.write(`${sized({ ...body, jsonrpc, id }, limit + 1)}\n`)
    server.write(`${sized({ params: body.params, id: 4, method: body.method, jsonrpc }, limit + 500)}\n`)
    server.write(`${'z'.repeat(5 * limit)}\n`)
    server.send(hello(5, 'after'))
    await server.waitForMessage((m) => m.id === 5, 'the answer to the call after them')
    const byId = (wanted: unknown) => server.messages().filter((m) => m.id === wanted)
    expect(byId(1)[0]?.result).toMatchObject({ isError: false })
    expect(byId('first')).toEqual([refusal('first', limit + 1, limit)])
    expect(byId(3)).toEqual([refusal(3, limit + 1, limit)])
    expect(byId(null)).toEqual([refusal(null, limit + 500, limit), refusal(null, 5 * limit, limit)])
    expect(byId(4)).toEqual([])
    expect(byId(5)[0]?.result).toEqual({
      content: [{ type: 'text', text: 'hello after from stdio-session' }],
      isError: false,
    })
  })
})
