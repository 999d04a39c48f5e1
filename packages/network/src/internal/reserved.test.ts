import { describe, expect, it } from 'vitest'
import { canonicalHost } from './host.js'
import { addressKey, isReserved } from './reserved.js'

/** The address as the proxy holds it: every spelling through `canonicalHost` first. */
const reserved = (text: string) => isReserved(canonicalHost(text)!.host)

describe('isReserved', () => {
  it.each([
    '127.0.0.1',
    '127.255.255.254',
    '0.0.0.0',
    '0.1.2.3',
    '10.0.0.5',
    '100.64.0.1',
    '100.127.255.255',
    '169.254.169.254',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '192.0.2.1',
    '198.18.0.1',
    '224.0.0.1',
    '239.255.255.250',
    '240.0.0.1',
    '255.255.255.255',
    '::',
    '::1',
    '::ffff:127.0.0.1',
    '::ffff:169.254.169.254',
    '::ffff:10.0.0.1',
    '::127.0.0.1',
    '64:ff9b::a9fe:a9fe',
    '2002:a00:1::1',
    'fe80::1',
    'febf::1',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    '2001:db8::1',
    '2001::1',
  ])('%s is local or reserved', (address) => {
    expect(reserved(address)).toBe(true)
  })

  it.each([
    '1.1.1.1',
    '8.8.8.8',
    '9.255.255.255',
    '11.0.0.0',
    '100.63.255.255',
    '100.128.0.0',
    '169.253.255.255',
    '172.15.255.255',
    '172.32.0.0',
    '192.167.255.255',
    '223.255.255.255',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
    '2606:4700:4700::1111',
    '2a00:1450:4001::1',
  ])('%s is on the internet', (address) => {
    expect(reserved(address)).toBe(false)
  })
})

describe('addressKey', () => {
  it('is the IPv4 address of an IPv4-mapped IPv6 address, and the address otherwise', () => {
    expect(addressKey(canonicalHost('::ffff:10.0.0.5')!.host)).toBe('10.0.0.5')
    expect(addressKey('10.0.0.5')).toBe('10.0.0.5')
    expect(addressKey('2001:db8::1')).toBe('2001:db8::1')
  })
})
