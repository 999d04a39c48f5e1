import { isIPv4, isIPv6 } from 'node:net'

/** A host in one spelling only: a name (lower case, punycode, no trailing dot) or an IP literal. */
export interface Host {
  /** `name`: resolved by the proxy; `address`: an IP literal, never resolved. */
  readonly kind: 'name' | 'address'
  /** The name, or the address in its shortest form (`::1`, never `[::1]` nor `0:0:0:0:0:0:0:1`). */
  readonly host: string
}

/**
 * Characters no host has. The URL parser would read some of them as another part of a URL (`@`
 * as userinfo, `/` as a path) and percent-decode `%`: refused before it sees them.
 */
const NOT_IN_A_HOST = /[\s/\\?#@%[\]<>^|"'`{}:*]/
const NAME = /^[a-z0-9_-]+(?:\.[a-z0-9_-]+)*$/

/**
 * `text` in its one spelling, or undefined when it is no host. IPv4 goes through the WHATWG host
 * parser, so `127.1`, `0x7f.1` and `2130706433` are the address `127.0.0.1` (as the C library's
 * resolver would read them), never a name a wildcard might match; a name is lower-cased and
 * IDNA-encoded the way every client encodes it. IPv6 literals come without brackets.
 */
export function canonicalHost(text: string): Host | undefined {
  const bare = text.endsWith('.') ? text.slice(0, -1) : text
  if (bare === '' || bare.length > 253) return undefined
  if (bare.includes(':')) {
    if (bare.includes('%') || !isIPv6(bare)) return undefined
    return { kind: 'address', host: new URL(`http://[${bare}]/`).hostname.slice(1, -1) }
  }
  if (NOT_IN_A_HOST.test(bare)) return undefined
  let parsed: string
  try {
    parsed = new URL(`http://${bare}/`).hostname
  } catch {
    return undefined
  }
  if (isIPv4(parsed)) return { kind: 'address', host: parsed }
  if (parsed.length > 253 || !NAME.test(parsed) || parsed.split('.').some((label) => label.length > 63)) {
    return undefined
  }
  return { kind: 'name', host: parsed }
}

/** `host:port`, with brackets around an IPv6 address: the key of accounts and markers. */
export function hostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`
}

/**
 * A host as a program gave it, safe to show: printable ASCII only, at most 253 characters. The
 * proxy reports hosts it refused because they were no host at all; those come from the tool.
 */
export function shownHost(text: string): string {
  return text.replace(/[^\x21-\x7e]/g, '?').slice(0, 253)
}

/**
 * An authority `host:port` or `[v6]:port` (a CONNECT target, a URL's host and port): its host as
 * given, without brackets, and its port; undefined when the port is missing or out of range.
 */
export function splitAuthority(text: string): { readonly host: string; readonly port: number } | undefined {
  const match = /^(?:\[([^\]]*)\]|([^:[\]]*)):([0-9]{1,5})$/.exec(text)
  if (match === null) return undefined
  const port = Number(match[3])
  if (port < 1 || port > 65535) return undefined
  return { host: match[1] ?? match[2] ?? '', port }
}
