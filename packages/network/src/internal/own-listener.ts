import { readdirSync, readFileSync, readlinkSync } from 'node:fs'

/**
 * Whether `port` is a TCP port this process listens on (toolvisor's own listener: `serve`'s HTTP
 * endpoint, the operator page): the kernel's listening sockets of that port (`/proc/net/tcp`,
 * `tcp6`, state 0A) against this process's descriptors. Asked only for a local or reserved
 * destination an allow list named, so the cost (a few reads) is paid on that path alone.
 */
export function ownListener(port: number): boolean {
  const inodes = new Set<string>()
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string
    try {
      text = readFileSync(table, 'latin1')
    } catch {
      continue
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/)
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
      const local = fields[1]
      if (fields[3] !== '0A' || local === undefined || fields[9] === undefined) continue
      if (Number.parseInt(local.slice(local.lastIndexOf(':') + 1), 16) === port) inodes.add(fields[9])
    }
  }
  if (inodes.size === 0) return false
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`)
      if (target.startsWith('socket:[') && inodes.has(target.slice(8, -1))) return true
    } catch {
      // closed meanwhile
    }
  }
  return false
}
