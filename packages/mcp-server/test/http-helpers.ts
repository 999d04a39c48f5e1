import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { afterEach } from 'vitest'
import type { HttpSurface } from '../src/index.js'

/** The bearer token of every test server (16 characters or more, as `serveHttp` asks). */
export const TOKEN = 'test-token-0123456789abcdef'

const servers: HttpSurface[] = []
const clients: Client[] = []

// Clients first (their sessions end), then the servers they spoke to.
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => {})
  for (const server of servers.splice(0)) await server.close()
})

/** Closes `server` after the test. */
export function closedAfter<T extends HttpSurface>(server: T): T {
  servers.push(server)
  return server
}

/** Closes `client` after the test, before the servers. */
export function disconnectedAfter<T extends Client>(client: T): T {
  clients.push(client)
  return client
}
