import { lstatSync, rmdirSync, type Stats, unlinkSync } from 'node:fs'
import { dirname, join } from 'node:path'
import type { ExtraFd, SandboxPolicy } from '@toolvisor/process-runtime'
import type { Mount } from './args.js'

/** A protected path that was missing: bwrap makes its mount point on the host, removed after the run. */
export interface Placeholder {
  readonly path: string
  readonly kind: 'dir' | 'file'
}

/** The mounts that keep a launch's protected paths read-only, and the placeholders they make. */
export interface Protection {
  readonly mounts: readonly Mount[]
  readonly placeholders: readonly Placeholder[]
}

/** The host's answer, without following a link; undefined when nothing is there. */
function lstatOrNone(path: string): Stats | undefined {
  try {
    return lstatSync(path)
  } catch {
    return undefined
  }
}

/**
 * How each protected path (`SandboxPolicy.protect`, decision 0096) of each writable grant is kept:
 * - there (a file or a directory): bound read-only over itself, from a descriptor pinned now (a
 *   swap between now and the start is refused, as a grant's is);
 * - missing: masked at its first missing part, so that it cannot be created: an empty read-only
 *   tmpfs where a directory would be (`.vscode`, or `.git` for `.git/hooks/`), an empty read-only
 *   file where a file would be (`.envrc`). bwrap makes the mount point in the grant, on the host:
 *   an empty directory or file, removed once the run ended (`release`), unless another run of
 *   this mechanism still has it (`placeholders` counts them), in which case it is masked again;
 * - a symbolic link, or below something that is not a directory (`.git` as a worktree's file):
 *   left alone. A mount lands on what a link leads to, never on the link, so the link's target is
 *   protected only where it lies itself (stated as a gap).
 * The write of a masked path fails with EROFS, as any denied write under bwrap does.
 */
export function protection(
  policy: SandboxPolicy,
  placeholders: ReadonlyMap<string, unknown>,
  lstat: (path: string) => Stats | undefined = lstatOrNone,
): Protection {
  const mounts: Mount[] = []
  const made = new Map<string, Placeholder>()
  const bound = new Set<string>()
  for (const [index, root] of policy.write.entries()) {
    for (const name of policy.protect ?? []) {
      const dirLike = name.endsWith('/')
      const parts = name.replace(/\/$/, '').split('/')
      let at = root
      for (const [i, part] of parts.entries()) {
        at = join(at, part)
        const last = i === parts.length - 1
        const stat = placeholders.has(at) ? undefined : lstat(at)
        if (stat === undefined) {
          // What the tool's user cannot create needs no mask (and bwrap, running as that user,
          // could not make its mount point).
          const parent = lstat(dirname(at))
          const creatable = parent !== undefined && mayCreateIn(parent, policy.user)
          if (creatable && !made.has(at)) made.set(at, { path: at, kind: last && !dirLike ? 'file' : 'dir' })
          break
        }
        if (stat.isSymbolicLink()) break
        if (last) {
          if (bound.has(at)) break
          bound.add(at)
          const fd: ExtraFd = {
            kind: 'file',
            path: at,
            pin: {
              identity: `${stat.dev}:${stat.ino}`,
              field: `the protected path ${name} of $.runtime.sandbox.fs.write[${index}]`,
            },
          }
          mounts.push({ path: at, args: [], host: true, from: { flag: '--ro-bind-fd', fd } })
          break
        }
        if (!stat.isDirectory()) break
      }
    }
  }
  for (const placeholder of made.values()) {
    if (placeholder.kind === 'dir') {
      const path = placeholder.path
      mounts.push({ path, args: ['--perms', '0555', '--tmpfs', path, '--remount-ro', path], host: false })
    } else {
      const fd: ExtraFd = { kind: 'data', data: new Uint8Array(0) }
      mounts.push({ path: placeholder.path, args: [], host: false, from: { flag: '--ro-bind-data', fd } })
    }
  }
  return { mounts, placeholders: [...made.values()] }
}

/**
 * Whether `user` may create an entry in a directory with these modes (write and search for its
 * class: owner, group, others). ACLs are not read: a directory only an ACL opens is left unmasked,
 * a gap `describe()` states. Root, and an unknown user, may.
 */
export function mayCreateIn(dir: Stats, user: SandboxPolicy['user']): boolean {
  if (!dir.isDirectory()) return false
  if (user === undefined || user.uid === 0) return true
  const bits = dir.uid === user.uid ? 0o300 : user.groups.includes(dir.gid) ? 0o030 : 0o003
  return (dir.mode & bits) === bits
}

/**
 * Removes a placeholder bwrap made, if it still is one: an empty directory, or an empty regular
 * file. Anything else (the run is over, but something put content there since) is left.
 */
export function removePlaceholder(placeholder: Placeholder): void {
  const stat = lstatOrNone(placeholder.path)
  if (stat === undefined) return
  try {
    if (placeholder.kind === 'dir' && stat.isDirectory()) rmdirSync(placeholder.path)
    else if (placeholder.kind === 'file' && stat.isFile() && stat.size === 0) unlinkSync(placeholder.path)
  } catch {
    // not empty, or gone meanwhile: left as it is
  }
}
