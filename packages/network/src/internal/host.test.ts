import { describe, expect, it } from 'vitest'
import { canonicalHost, hostPort, shownHost, splitAuthority } from './host.js'

describe('canonicalHost', () => {
  it.each([
    ['Example.COM.', { kind: 'name', host: 'example.com' }],
    ['127.1', { kind: 'address', host: '127.0.0.1' }],
    ['0x7f.0.0.1', { kind: 'address', host: '127.0.0.1' }],
    ['2130706433', { kind: 'address', host: '127.0.0.1' }],
    ['0:0:0:0:0:0:0:1', { kind: 'address', host: '::1' }],
    ['::FFFF:127.0.0.1', { kind: 'address', host: '::ffff:7f00:1' }],
    ['bücher.example', { kind: 'name', host: 'xn--bcher-kva.example' }],
  ])('spells %j one way', (text, host) => {
    expect(canonicalHost(text)).toEqual(host)
  })

  it.each([
    '',
    '.',
    'a b',
    'user@host',
    'host/path',
    'a%2eb',
    'a..b',
    '1.2.3.4.5',
    'fe80::1%lo',
    '[::1]',
    'a:b',
    '*.x',
  ])('refuses %j', (text) => {
    expect(canonicalHost(text)).toBeUndefined()
  })
})

describe('hostPort, shownHost, splitAuthority', () => {
  it('brackets an IPv6 address, and only that', () => {
    expect(hostPort('::1', 80)).toBe('[::1]:80')
    expect(hostPort('example.com', 443)).toBe('example.com:443')
  })

  it('shows what a program sent as printable ASCII, cut at 253', () => {
    expect(shownHost('a\r\nb c\u00e9')).toBe('a??b?c?')
    expect(shownHost('x'.repeat(300))).toHaveLength(253)
  })

  it('splits an authority, with a port from 1 to 65535', () => {
    expect(splitAuthority('example.com:443')).toEqual({ host: 'example.com', port: 443 })
    expect(splitAuthority('[::1]:8080')).toEqual({ host: '::1', port: 8080 })
    for (const bad of ['example.com', 'example.com:0', 'example.com:70000', '::1:80', 'a:b:c'])
      expect(splitAuthority(bad)).toBeUndefined()
  })
})
