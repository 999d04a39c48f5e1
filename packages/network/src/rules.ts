import { canonicalHost } from './internal/host.js'

/**
 * What a gate lets through, by name. Each entry is a host (`registry.npmjs.org`), the names under
 * a domain (`*.github.com`: its subdomains at any depth, not `github.com` itself) or an IP
 * address (`10.0.0.5`, `::1`), with `:port` when only that port may be reached (`host:5432`,
 * `10.0.0.5:5432`, `[::1]:8080`); without a port, any port. Names compare case-insensitively and
 * without a trailing dot. A deny entry wins over every allow entry.
 */
export interface NetRules {
  /** Entries a connection may go to (see {@link NetRules}); a name entry never allows a raw IP. */
  readonly allow: readonly string[]
  /** Entries a connection may never go to, whatever `allow` says. */
  readonly deny: readonly string[]
}

/** One parsed entry of {@link NetRules}. */
export interface NetEntry {
  /**
   * `name`: this host exactly; `subdomains`: every name under `host` (from `*.host`), not `host`
   * itself; `address`: this IP address, asked for as a literal or resolved from a name.
   */
  readonly kind: 'name' | 'subdomains' | 'address'
  /** The name (lower case, punycode, no trailing dot) or the address in its shortest form, without brackets. */
  readonly host: string
  /** The one port the entry allows or denies; absent: every port. */
  readonly port?: number
}

const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i
const AFTER_HOST = /[/?#]/

/**
 * The entry `text` of a {@link NetRules} list, or why it is not one, naming the entry (for the
 * load-time error that names its place: `allow[2]: ...`). Refused: an empty entry, spaces, a
 * scheme or a path (a URL where a host goes), a user part, a port that is not 1 to 65535, `*`
 * alone, a `*` anywhere but as the whole first label (`*foo.com`, `a.*.com`), a wildcard over an
 * address, and anything else that is no host name or IP address.
 *
 * @example
 * ```ts
 * parseNetEntry('*.github.com') // { kind: 'subdomains', host: 'github.com' }
 * parseNetEntry('[::1]:8080') // { kind: 'address', host: '::1', port: 8080 }
 * parseNetEntry('https://x.org') // '"https://x.org" names a scheme; give the host alone ("x.org")'
 * ```
 */
export function parseNetEntry(text: string): NetEntry | string {
  const shown = JSON.stringify(text)
  if (text === '')
    return 'an empty entry; give a host name, "*.domain" or an IP address, with ":port" for one port'
  if (/\s/.test(text)) return `${shown} contains a space; give one host per entry`
  const scheme = SCHEME.exec(text)
  if (scheme !== null) {
    const host = text.slice(scheme[0].length).split(AFTER_HOST)[0]
    return `${shown} names a scheme; give the host alone (${JSON.stringify(host)})`
  }
  if (AFTER_HOST.test(text)) {
    return `${shown} has a path; give the host alone (${JSON.stringify(text.split(AFTER_HOST)[0])})`
  }
  if (text.includes('@')) return `${shown} has a user part; give the host alone`
  const split = splitPort(text)
  if (typeof split === 'string') return `${shown} ${split}`
  const { host, port } = split
  const ported = port === undefined ? {} : { port }
  if (host === '*') {
    return `${shown} would allow every host; list the names, or "*.example.com" for the names under a domain`
  }
  if (host.startsWith('*.')) {
    const domain = host.slice(2)
    const parsed = domain.includes('*') ? undefined : canonicalHost(domain)
    if (parsed === undefined) return `${shown} is not "*." followed by a domain name, as in "*.example.com"`
    if (parsed.kind === 'address') return `${shown} puts a wildcard over an address; a wildcard covers names`
    return { kind: 'subdomains', host: parsed.host, ...ported }
  }
  if (host.includes('*')) {
    return `${shown} has "*" inside a name; a wildcard is "*." before a domain, as in "*.example.com"`
  }
  const parsed = canonicalHost(host)
  if (parsed === undefined) return `${shown} is not a host name or an IP address`
  return { kind: parsed.kind, host: parsed.host, ...ported }
}

/** `host:port`, `[v6]:port`, `[v6]`, a bare v6 address or a host: the host and the port, or what is wrong. */
function splitPort(text: string): { readonly host: string; readonly port?: number } | string {
  let host = text
  let port: string | undefined
  const bracketed = /^\[([^\]]*)\](?::(.*))?$/.exec(text)
  if (bracketed !== null) {
    host = bracketed[1] ?? ''
    port = bracketed[2]
    if (!host.includes(':')) return 'has brackets around something that is not an IPv6 address'
  } else if (text.includes('[') || text.includes(']')) {
    return 'has a stray bracket; an IPv6 address with a port is written "[::1]:8080"'
  } else if (text.indexOf(':') >= 0 && text.indexOf(':') === text.lastIndexOf(':')) {
    host = text.slice(0, text.indexOf(':'))
    port = text.slice(text.indexOf(':') + 1)
  }
  if (port === undefined) return { host }
  const number = /^[0-9]{1,5}$/.test(port) ? Number(port) : 0
  if (number < 1 || number > 65535)
    return `has a bad port ${JSON.stringify(port)}; a port is a number from 1 to 65535`
  return { host, port: number }
}
