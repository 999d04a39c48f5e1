import type { IncomingMessage } from 'node:http'
import { describe, expect, it } from 'vitest'
import { clientOf, RefusalLog } from './http-log.js'

/** A request as the log reads it: its method, path and peer. */
const request = (address: string | undefined, port = 40000) =>
  ({
    method: 'POST',
    url: '/mcp?x=1',
    socket: { remoteAddress: address, remotePort: port },
  }) as unknown as IncomingMessage
const wrong = { status: 401, message: 'wrong bearer token' } as const

describe('RefusalLog', () => {
  it('logs one line per address and reason per 10 s, at most 20 per 10 s in all, and counts what it left out', () => {
    const lines: string[] = []
    let now = 1_000_000
    const log = new RefusalLog(
      (line) => lines.push(line),
      () => now,
    )
    for (let i = 0; i < 100; i++) log.note(request('10.0.0.1'), wrong)
    expect(lines).toEqual(['refused POST "/mcp" from 10.0.0.1:40000: wrong bearer token (401)'])
    // A flood from many addresses: 20 lines in the window, the rest counted.
    for (let i = 0; i < 50; i++) log.note(request(`10.0.1.${i}`), wrong)
    expect(lines).toHaveLength(20)
    expect(lines[1]).toBe(
      'refused POST "/mcp" from 10.0.1.0:40000: wrong bearer token (401) (and 99 refused request(s) not logged before it)',
    )
    now += 10_000
    log.note(request('10.0.0.1'), wrong)
    expect(lines.at(-1)).toBe(
      'refused POST "/mcp" from 10.0.0.1:40000: wrong bearer token (401) (and 31 refused request(s) not logged before it)',
    )
    log.note(request(undefined), { status: 401, message: 'missing Authorization: Bearer <token>' })
    expect(lines.at(-1)).toBe(
      'refused POST "/mcp" from the unix socket: missing Authorization: Bearer <token> (401)',
    )
    log.note(request('::1'), wrong)
    expect(lines.at(-1)).toBe('refused POST "/mcp" from [::1]:40000: wrong bearer token (401)')
  })

  it('names the client of an initialize as it said itself, quoted', () => {
    const initialize = (clientInfo: unknown) => ({
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', clientInfo },
    })
    expect(clientOf(initialize({ name: 'claude-code', version: '2.1.197' }))).toBe(
      '"claude-code" "2.1.197" (protocol "2025-11-25")',
    )
    expect(clientOf([initialize({ name: 'x\u001b[2J' })])).toBe('"x\\u001b[2J" (protocol "2025-11-25")')
    expect(clientOf(undefined)).toBe('a client that gave no name')
  })
})
