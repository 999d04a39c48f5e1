import { describe, expect, it } from 'vitest'
import { parseNetEntry } from './rules.js'

describe('parseNetEntry', () => {
  it.each([
    ['registry.npmjs.org', { kind: 'name', host: 'registry.npmjs.org' }],
    ['Registry.NPMJS.org.', { kind: 'name', host: 'registry.npmjs.org' }],
    ['*.github.com', { kind: 'subdomains', host: 'github.com' }],
    ['*.com', { kind: 'subdomains', host: 'com' }],
    ['host:5432', { kind: 'name', host: 'host', port: 5432 }],
    ['*.corp.example:443', { kind: 'subdomains', host: 'corp.example', port: 443 }],
    ['10.0.0.5', { kind: 'address', host: '10.0.0.5' }],
    ['10.0.0.5:5432', { kind: 'address', host: '10.0.0.5', port: 5432 }],
    ['[::1]:8080', { kind: 'address', host: '::1', port: 8080 }],
    ['[::1]', { kind: 'address', host: '::1' }],
    ['::1', { kind: 'address', host: '::1' }],
    ['[0:0:0:0:0:0:0:1]:65535', { kind: 'address', host: '::1', port: 65535 }],
    ['127.1', { kind: 'address', host: '127.0.0.1' }],
    ['bücher.example', { kind: 'name', host: 'xn--bcher-kva.example' }],
    ['under_score.example', { kind: 'name', host: 'under_score.example' }],
  ])('accepts %j', (text, entry) => {
    expect(parseNetEntry(text)).toEqual(entry)
  })

  it.each([
    ['', 'an empty entry; give a host name, "*.domain" or an IP address, with ":port" for one port'],
    ['a b.example', '"a b.example" contains a space; give one host per entry'],
    [' x.example', '" x.example" contains a space; give one host per entry'],
    ['host:0', '"host:0" has a bad port "0"; a port is a number from 1 to 65535'],
    ['host:65536', '"host:65536" has a bad port "65536"; a port is a number from 1 to 65535'],
    ['host:http', '"host:http" has a bad port "http"; a port is a number from 1 to 65535'],
    ['host:', '"host:" has a bad port ""; a port is a number from 1 to 65535'],
    ['[::1]:x', '"[::1]:x" has a bad port "x"; a port is a number from 1 to 65535'],
    ['*', '"*" would allow every host; list the names, or "*.example.com" for the names under a domain'],
    [
      '*:443',
      '"*:443" would allow every host; list the names, or "*.example.com" for the names under a domain',
    ],
    [
      '*foo.com',
      '"*foo.com" has "*" inside a name; a wildcard is "*." before a domain, as in "*.example.com"',
    ],
    ['a.*.com', '"a.*.com" has "*" inside a name; a wildcard is "*." before a domain, as in "*.example.com"'],
    ['*.*.com', '"*.*.com" is not "*." followed by a domain name, as in "*.example.com"'],
    ['*.', '"*." is not "*." followed by a domain name, as in "*.example.com"'],
    ['*.10.0.0.5', '"*.10.0.0.5" puts a wildcard over an address; a wildcard covers names'],
    ['https://x.example', '"https://x.example" names a scheme; give the host alone ("x.example")'],
    [
      'http://x.example:8080/path',
      '"http://x.example:8080/path" names a scheme; give the host alone ("x.example:8080")',
    ],
    ['x.example/path', '"x.example/path" has a path; give the host alone ("x.example")'],
    ['x.example?q', '"x.example?q" has a path; give the host alone ("x.example")'],
    ['user@x.example', '"user@x.example" has a user part; give the host alone'],
    ['[x.example]:80', '"[x.example]:80" has brackets around something that is not an IPv6 address'],
    ['::1]:80', '"::1]:80" has a stray bracket; an IPv6 address with a port is written "[::1]:8080"'],
    ['a..b', '"a..b" is not a host name or an IP address'],
    ['999.1.1.1', '"999.1.1.1" is not a host name or an IP address'],
    ['fe80::1%eth0', '"fe80::1%eth0" is not a host name or an IP address'],
    ['x!.example', '"x!.example" is not a host name or an IP address'],
    [`${'a'.repeat(64)}.example`, `"${'a'.repeat(64)}.example" is not a host name or an IP address`],
  ])('refuses %j, saying why', (text, reason) => {
    expect(parseNetEntry(text)).toBe(reason)
  })
})
