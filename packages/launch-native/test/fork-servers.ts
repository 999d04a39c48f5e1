// A fork server per test, closed after it: the built toolvisor-spawnd, as the runtime starts it.
import { afterEach } from 'vitest'
import { ForkServer } from '../src/fork-server.js'
import { builtForkServer } from '../src/native-spawner.js'

const servers: ForkServer[] = []
afterEach(() => {
  for (const server of servers.splice(0)) server.close()
})

/** A fork server of the built binary, closed after the test. */
export function server(): ForkServer {
  const started = new ForkServer(builtForkServer)
  servers.push(started)
  return started
}
