import { describe, expect, it } from 'vitest'
import { groupAlive, groups, waitFor } from './helpers.js'
import { runFixture } from './stdio-helpers.js'

const invalid = (id: unknown, message: string) => ({
  jsonrpc: '2.0',
  id,
  error: { code: -32600, message: `Invalid Request: ${message}` },
})

/** A tools/call line with the id (and `_meta`) written as raw JSON text. */
const call = (id: string, name: string, meta?: string) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${name}","arguments":{"who":"x"}${meta ? `,"_meta":${meta}` : ''}}}\n`

describe('request ids MCP does not allow are answered, as JSON-RPC 2.0 says', () => {
  it('null, a float, an object, an array, a boolean, an integer beyond 2^53: -32600, with the id when it was read exactly, else null', async () => {
    const server = runFixture()
    await server.initialize()
    for (const id of ['null', '1.5', '{"n":1}', '[2]', 'true', '9007199254740993', '2']) {
      server.write(call(id, 'say__hello'))
    }
    await server.waitForMessage((m) => m.id === 2, 'the answer to a good id after them')
    const refused = server.messages().filter((m) => 'error' in m)
    const rule = 'the id must be a string or an integer (MCP); got'
    expect(refused).toEqual([
      invalid(null, `${rule} null`),
      invalid(1.5, `${rule} 1.5`),
      invalid(null, `${rule} an object`),
      invalid(null, `${rule} an array`),
      invalid(null, `${rule} a boolean`),
      invalid(null, `${rule} 9007199254740992, beyond 2^53 - 1, where JSON numbers stop being exact`),
    ])
    expect(server.stderr.text()).toContain(`fixture: refused a message: Invalid Request: ${rule} 1.5\n`)
  })

  it('answers a line that is not JSON with -32700, a message that is not a request with -32600, and keeps the id it could read', async () => {
    const server = runFixture()
    await server.initialize()
    server.write('{"jsonrpc":"2.0","id":3,\n')
    server.write('42\n')
    server.write('[{"jsonrpc":"2.0","id":4,"method":"ping"},{"jsonrpc":"2.0","method":"ping"}]\n')
    server.write('[]\n')
    server.write('{"jsonrpc":"1.0","id":5,"method":"ping"}\n')
    server.write('{"jsonrpc":"2.0","id":6,"method":7}\n')
    server.write('{"jsonrpc":"2.0","id":7,"method":"tools/list","params":[1]}\n')
    server.write('{"jsonrpc":"2.0","id":8,"method":"ping","extra":true}\n')
    server.write('{"jsonrpc":"2.0","id":9}\n')
    server.write('{"jsonrpc":"2.0","method":5}\n')
    server.write(
      '{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/related-task":5}}}\n',
    )
    server.write('\n')
    server.send({ jsonrpc: '2.0', id: 11, method: 'ping' })
    await server.waitForMessage((m) => m.id === 11, 'the answer to the ping after them')
    const batch = 'batches (JSON arrays) are not supported (MCP 2025-06-18); send one message per line'
    expect(server.messages().filter((m) => 'error' in m)).toEqual([
      {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32700, message: 'Parse error: the line is not valid JSON' },
      },
      invalid(null, 'a message is a JSON object; got a number'),
      invalid(4, batch),
      invalid(null, batch),
      invalid(5, '$.jsonrpc: must be "2.0"'),
      invalid(6, '$.method: must be a string'),
      invalid(7, '$.params: must be an object'),
      invalid(8, '$.extra: not a member of a JSON-RPC request'),
      invalid(
        9,
        'a message needs a method (a request or a notification) or a result or an error (a response)',
      ),
      invalid(null, '$.method: must be a string'),
      invalid(
        10,
        '$.params._meta.io.modelcontextprotocol/related-task: Invalid input: expected object, received number',
      ),
    ])
    expect(server.messages().at(-1)).toEqual({ jsonrpc: '2.0', id: 11, result: {} })
  })

  it('answers with the very id it was sent: 0, a negative, 2^53 - 1, a string', async () => {
    const server = runFixture()
    await server.initialize('init')
    for (const id of [0, -5, Number.MAX_SAFE_INTEGER, 'é"x'])
      server.write(call(JSON.stringify(id), 'say__hello'))
    await waitFor(() => server.messages().length === 5, 20_000, 'four answers')
    expect(
      server
        .messages()
        .slice(1)
        .map((m) => [m.id, m.result?.isError]),
    ).toEqual([
      [0, false],
      [-5, false],
      [Number.MAX_SAFE_INTEGER, false],
      ['é"x', false],
    ])
  })
})

describe('progress tokens MCP does not allow', () => {
  it('1.5, null, {}: the call runs and answers, without progress, and the token is logged as ignored', async () => {
    const server = runFixture()
    await server.initialize()
    server.write(call('1', 'ticker', '{"progressToken":1.5}'))
    server.write(call('2', 'ticker', '{"progressToken":null}'))
    server.write(call('3', 'ticker', '{"progressToken":{}}'))
    for (const id of [1, 2, 3]) {
      const answer = await server.waitForMessage((m) => m.id === id, `the answer to ${id}`)
      expect(answer.result).toEqual({ content: [{ type: 'text', text: '3 ticks' }], isError: false })
    }
    expect(server.messages().filter((m) => m.method === 'notifications/progress')).toEqual([])
    for (const [id, token] of [
      [1, '1.5'],
      [2, 'null'],
      [3, 'an object'],
    ]) {
      expect(server.stderr.text()).toContain(
        `fixture: request ${id}: ignored _meta.progressToken ${token} (a progress token is a string or an integer); the call runs without progress\n`,
      )
    }
  })
})

describe('cancellation', () => {
  it('honours notifications/cancelled for request id 0', async () => {
    const server = runFixture()
    await server.initialize('init')
    server.send({ jsonrpc: '2.0', id: 0, method: 'tools/call', params: { name: 'sleeper' } })
    const pgid = Number((await server.stderr.waitFor(/sleep-pgid (\d+)/))[1])
    groups.add(pgid)
    server.send({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 0, reason: 'stop' },
    })
    await server.stderr.waitFor(/fixture: sleeper aborted\n/)
    await waitFor(() => !groupAlive(pgid), 5000, `process group ${pgid} to exit`)
    server.send({ jsonrpc: '2.0', id: 1, method: 'ping' })
    await server.waitForMessage((m) => m.id === 1, 'the ping answer')
    // A cancelled request gets no answer (MCP cancellation).
    expect(server.messages().map((m) => m.id)).toEqual(['init', 1])
  })

  it('ignores a cancel for a request that is over, even when its id was reused inside', async () => {
    const server = runFixture()
    await server.initialize('init')
    server.send({ jsonrpc: '2.0', id: 5, method: 'ping' })
    await server.waitForMessage((m) => m.id === 5, 'the ping answer')
    server.send({ jsonrpc: '2.0', id: 'long', method: 'tools/call', params: { name: 'sleeper' } })
    const pgid = Number((await server.stderr.waitFor(/sleep-pgid (\d+)/))[1])
    groups.add(pgid)
    for (const requestId of [5, 1, 2, 3]) {
      server.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId } })
    }
    server.send({ jsonrpc: '2.0', id: 6, method: 'ping' })
    await server.waitForMessage((m) => m.id === 6, 'the second ping answer')
    expect(groupAlive(pgid)).toBe(true)
    server.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'long' } })
    await waitFor(() => !groupAlive(pgid), 5000, `process group ${pgid} to exit`)
  })
})
