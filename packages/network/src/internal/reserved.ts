import { isIPv4 } from 'node:net'

/** IPv4 ranges no allow-listed name may lead to, as [first address, prefix length]. */
const V4_RESERVED: readonly (readonly [string, number])[] = [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback: toolvisor's own listeners live here
  ['169.254.0.0', 16], // link-local, the cloud metadata address 169.254.169.254
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relays
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and the broadcast address 255.255.255.255
]

function v4Number(address: string): number {
  return address.split('.').reduce((value, part) => value * 256 + Number(part), 0)
}

const V4_RANGES = V4_RESERVED.map(([first, bits]) => ({ first: v4Number(first), size: 2 ** (32 - bits) }))

function v4Reserved(value: number): boolean {
  return V4_RANGES.some((range) => value >= range.first && value < range.first + range.size)
}

/** The eight 16-bit groups of an IPv6 address in the form `canonicalHost` gives (no dotted tail). */
function v6Groups(address: string): number[] {
  const [head = '', tail] = address.split('::')
  const parse = (part: string) =>
    part === '' ? [] : part.split(':').map((group) => Number.parseInt(group, 16))
  const front = parse(head)
  if (tail === undefined) return front
  const back = parse(tail)
  return [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back]
}

function v6Reserved(groups: number[]): boolean {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = groups
  const embedded = g6 * 65536 + g7
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0) {
    // ::ffff:a.b.c.d reaches the IPv4 address: it is what that address is. The rest of ::/64
    // (::, ::1, the deprecated IPv4-compatible ::a.b.c.d, ::ffff:0:a.b.c.d) is reserved.
    return g4 === 0 && g5 === 0xffff ? v4Reserved(embedded) : true
  }
  if (g0 === 0x64 && g1 === 0xff9b)
    return g2 !== 0 || g3 !== 0 || g4 !== 0 || g5 !== 0 || v4Reserved(embedded) // NAT64
  if (g0 === 0x2002) return v4Reserved(g1 * 65536 + g2) // 6to4 carries its IPv4 address
  if (g0 === 0x100 && g1 === 0 && g2 === 0 && g3 === 0) return true // discard
  if (g0 === 0x2001 && (g1 < 0x200 || g1 === 0xdb8)) return true // IETF assignments, Teredo, documentation
  if ((g0 & 0xffc0) === 0xfe80 || (g0 & 0xffc0) === 0xfec0) return true // link-local, old site-local
  if ((g0 & 0xfe00) === 0xfc00) return true // unique local
  return (g0 & 0xff00) === 0xff00 // multicast
}

/**
 * Whether `address` (as `canonicalHost` gives it) is loopback, private, link-local, shared,
 * multicast, broadcast, documentation or otherwise not a host on the internet; an IPv6 address
 * that carries an IPv4 one (mapped, NAT64, 6to4) is what that IPv4 address is.
 */
export function isReserved(address: string): boolean {
  return isIPv4(address) ? v4Reserved(v4Number(address)) : v6Reserved(v6Groups(address))
}

/**
 * The address as compared with a list entry: an IPv4-mapped IPv6 address is its IPv4 address, so
 * that `::ffff:10.0.0.5` is denied by a deny entry `10.0.0.5`.
 */
export function addressKey(address: string): string {
  if (isIPv4(address)) return address
  const groups = v6Groups(address)
  if (groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) {
    const value = (groups[6] ?? 0) * 65536 + (groups[7] ?? 0)
    return [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join('.')
  }
  return address
}
