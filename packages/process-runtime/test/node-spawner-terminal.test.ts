// Node's own spawn cannot make a pseudo-terminal (decision 0110): a launch that asks for one is
// refused with the reason, and nothing runs on pipes instead.
import { describe, expect, it } from 'vitest'
import { nodeSpawner } from '../src/index.js'

describe("Node's own spawner and a terminal", () => {
  it('refuses a launch with a terminal, naming what makes one', async () => {
    const launch = nodeSpawner.launch({
      file: '/bin/true',
      args: [],
      env: {},
      cwd: '/',
      extraFds: [],
      terminal: { columns: 80, rows: 24 },
    })
    await expect(launch).rejects.toMatchObject({
      code: 'RUNTIME_ERR_SPAWN_FAILED',
      message:
        'cannot start /bin/true on a terminal: only the fork server of @toolvisor/launch-native makes one, and it is not composed here',
    })
  })
})
