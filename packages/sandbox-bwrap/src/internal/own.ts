import { lstatSync } from 'node:fs'
import { dirname } from 'node:path'
import type { OwnPath } from '@toolvisor/launchers'
import { isWithin, type Mount } from './args.js'

/** What a path is on the host now: a directory, anything else, or nothing. */
export type PathKind = 'dir' | 'other' | undefined

/** The host's answer, without following a link (own paths are realpath'd: a link here is new). */
export function kindOnHost(path: string): PathKind {
  try {
    const stat = lstatSync(path)
    if (stat.isSymbolicLink()) return undefined
    return stat.isDirectory() ? 'dir' : 'other'
  } catch {
    return undefined
  }
}

/** A bind of the host whose content the tool may change. */
function writable(mount: Mount): boolean {
  return mount.host && (mount.grant === 'rw' || mount.args[0] === '--bind')
}

/**
 * The mounts that keep toolvisor's own paths out (decision 0095), for a list of mounts the sandbox
 * would otherwise have. For each own path that the sandbox shows from the host (the last mount
 * covering it is a host bind: a bash mode's `/`, `/etc`, a shared `/tmp`):
 * - a secret is masked: an empty read-only tmpfs over a directory, /dev/null over anything else
 *   (a token file, a socket), so neither its content nor its names can be read;
 * - the installation under a writable bind is bound read-only over itself;
 * - under a writable bind, each directory between that bind and the path is bound onto itself: a
 *   mount point cannot be renamed, so the tool cannot move the path's parents away and put a
 *   directory of its own where toolvisor will look next (a planted `serve.token`).
 * Own paths missing on the host, or shown from a tmpfs, need nothing. The caller sorts the result
 * in among the other mounts by depth (after those of the same depth).
 */
export function ownMounts(
  own: readonly OwnPath[],
  list: readonly Mount[],
  kindOf: (path: string) => PathKind = kindOnHost,
): Mount[] {
  const extra: Mount[] = []
  const pinned = new Set<string>()
  for (const entry of own) {
    // Inside a masked secret already: nothing to show, and no mount point to make in an empty tmpfs.
    if (
      own.some(
        (outer) => outer.kind === 'secret' && outer.path !== entry.path && isWithin(entry.path, outer.path),
      )
    )
      continue
    const covering = list.filter((mount) => isWithin(entry.path, mount.path)).at(-1)
    if (covering === undefined || !covering.host) continue
    const kind = kindOf(entry.path)
    if (kind === undefined) continue
    const open = writable(covering)
    if (entry.kind === 'code' && !open) continue
    if (open) {
      for (
        let dir = dirname(entry.path);
        dir !== covering.path && isWithin(dir, covering.path);
        dir = dirname(dir)
      ) {
        if (pinned.has(dir)) continue
        pinned.add(dir)
        extra.push({ path: dir, args: ['--bind', dir, dir], host: true })
      }
    }
    if (entry.kind === 'code') {
      extra.push({ path: entry.path, args: ['--ro-bind', entry.path, entry.path], host: true })
    } else if (kind === 'dir') {
      extra.push({
        path: entry.path,
        args: ['--perms', '0755', '--tmpfs', entry.path, '--remount-ro', entry.path],
        host: false,
      })
    } else {
      extra.push({ path: entry.path, args: ['--ro-bind', '/dev/null', entry.path], host: false })
    }
  }
  return extra
}
