import { describe, expect, it } from 'vitest'
import { covers, proxyEnvironment } from './gates.js'

describe('covers: an operator entry over a tool entry', () => {
  it.each([
    ['registry.npmjs.org', 'registry.npmjs.org', true],
    ['registry.npmjs.org', 'REGISTRY.npmjs.org.', true],
    ['registry.npmjs.org', 'registry.npmjs.org:443', true],
    ['registry.npmjs.org:443', 'registry.npmjs.org', false],
    ['registry.npmjs.org:443', 'registry.npmjs.org:443', true],
    ['*.github.com', 'api.github.com', true],
    ['*.github.com', 'a.b.github.com:443', true],
    ['*.github.com', '*.api.github.com', true],
    ['*.github.com', '*.github.com', true],
    ['*.github.com', 'github.com', false],
    ['*.github.com', 'evilgithub.com', false],
    ['api.github.com', '*.github.com', false],
    ['10.0.0.5', '10.0.0.5:5432', true],
    ['10.0.0.5', '10.0.0.6', false],
    ['*.example.com', '10.0.0.5', false],
    ['[::1]:8080', '[::1]:8080', true],
    ['not a name', 'x.org', false],
  ])('%s covers %s: %s', (bound, entry, expected) => {
    expect(covers(bound, entry)).toBe(expected)
  })
})

describe('proxyEnvironment', () => {
  it('names the proxy in every variable, both cases, and keeps loopback direct', () => {
    expect(proxyEnvironment(3128)).toEqual({
      HTTP_PROXY: 'http://127.0.0.1:3128',
      HTTPS_PROXY: 'http://127.0.0.1:3128',
      ALL_PROXY: 'socks5h://127.0.0.1:3128',
      NO_PROXY: 'localhost,127.0.0.1,::1',
      http_proxy: 'http://127.0.0.1:3128',
      https_proxy: 'http://127.0.0.1:3128',
      all_proxy: 'socks5h://127.0.0.1:3128',
      no_proxy: 'localhost,127.0.0.1,::1',
    })
  })
})
