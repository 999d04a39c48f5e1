import { lstatSync, readlinkSync } from 'node:fs'
import { join } from 'node:path'

/** A top-level directory of the host the exec minimum mirrors: a usr-merge link, or a real dir. */
export type HostEntry =
  | { readonly path: string; readonly kind: 'symlink'; readonly target: string }
  | { readonly path: string; readonly kind: 'dir' }

/** The directories next to /usr that binaries and the dynamic loader are found through. */
const MIRRORED = ['/bin', '/sbin', '/lib', '/lib64', '/lib32', '/libx32'] as const

/**
 * Reads what the host has at `/bin`, `/sbin`, `/lib`, ...: a symlink (`usr/bin` on usr-merged
 * systems) is recreated with `--symlink`, a real directory is bound read-only, a missing one is
 * skipped. `root` exists for tests; the mechanism always reads `/`.
 */
export function hostLayout(root = '/'): HostEntry[] {
  const entries: HostEntry[] = []
  for (const path of MIRRORED) {
    const onHost = join(root, path)
    let stat: ReturnType<typeof lstatSync>
    try {
      stat = lstatSync(onHost)
    } catch {
      continue
    }
    if (stat.isSymbolicLink()) entries.push({ path, kind: 'symlink', target: readlinkSync(onHost) })
    else if (stat.isDirectory()) entries.push({ path, kind: 'dir' })
  }
  return entries
}
