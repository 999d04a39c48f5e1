// A launch may connect, and be refused, before the runtime has wired its process to its gate (the
// fork server answers its exec a moment after it runs): a listener that subscribes late still hears
// of those refusals, so the process's stderr marks them (seen once as a missing marker under load).
import { request } from 'node:http'
import { afterEach, describe, expect, it } from 'vitest'
import { networkGates } from '../src/index.js'

const disposers: Array<() => PromiseLike<void>> = []
afterEach(async () => {
  for (const dispose of disposers.splice(0)) await dispose()
})

/** A plain HTTP request through the proxy at `port` for `url`; resolves with the status. */
function viaProxy(port: number, url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path: url, headers: { host: new URL(url).host } },
      (res) => {
        res.resume()
        resolve(res.statusCode ?? 0)
      },
    )
    req.on('error', reject)
    req.end()
  })
}

describe('a gate and a listener that subscribes after a refusal', () => {
  it('tells it of the refusals made before it subscribed, then of the later ones, once each', async () => {
    const gates = networkGates({ proxy: { resolve: async () => ['127.0.0.1'] } })
    disposers.push(() => gates[Symbol.asyncDispose]())
    const gate = await gates.open({
      id: 'late',
      list: { allow: ['allowed.test'], deny: [], publish: [] },
      route: 'port',
    })
    disposers.push(() => gate.close())
    expect(await viaProxy(gate.route.port, 'http://early.test:8080/')).toBe(403)
    const heard: string[] = []
    gate.onDenied((denial) => heard.push(denial.marker))
    expect(heard).toEqual(['[network: blocked early.test:8080, not in the allow list]'])
    expect(await viaProxy(gate.route.port, 'http://later.test:8080/')).toBe(403)
    expect(heard).toEqual([
      '[network: blocked early.test:8080, not in the allow list]',
      '[network: blocked later.test:8080, not in the allow list]',
    ])
  })
})
