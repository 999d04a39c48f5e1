/**
 * Where a launch's protected paths are (`SandboxPolicy.protect`, decision 0096), for a mechanism
 * to keep read-only: which are there, which are missing and must be masked, and the placeholders
 * a mask leaves on the host until the run ends. Every mechanism plans the same way; only how it
 * mounts differs.
 */
import { lstatSync, type Stats } from 'node:fs'
import { dirname, join } from 'node:path'
import { RuntimeError } from './errors.js'
import type { Launch, Pin, SandboxPolicy } from './launchers.js'
import { type Placeholder, removePlaceholder } from './placeholder.js'

/** A protected path of one launch, and how it is to be kept. */
export interface ProtectedTarget {
  /** Absolute: a writable grant, and the protected path below it (up to its first missing part). */
  readonly path: string
  /** `there`: bound read-only over itself; `missing`: masked by a placeholder, so it cannot be made. */
  readonly state: 'there' | 'missing'
  /** What is (or would be) there: a directory or a file. */
  readonly kind: 'dir' | 'file'
  /** For `there`: what it is now and the field that protects it (a swap before the start is refused). */
  readonly pin?: Pin
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
 * The protected paths of each writable grant, as the host has them now:
 * - there (a file or a directory): `there`, pinned;
 * - missing: `missing` at its first missing part, a directory where one would be (`.vscode`, or
 *   `.git` for `.git/hooks/` in a folder that is no repository), else a file (`.envrc`); one that a
 *   placeholder of another run holds (`held`) counts as missing too, and is masked again;
 * - missing where the tool's user could not create it anyway (its parent's modes): nothing;
 * - a file where a directory of the path would be (`.git` of a worktree or a submodule: a file
 *   that names the git directory): that file, `there`;
 * - a symbolic link, a FIFO, a socket or a device on the way: refused (`RUNTIME_ERR_PROTECTED_PATH`):
 *   a mount lands on what a link leads to, never on the link, and none of them can be bound over,
 *   so the command could replace it with what runs later. Nothing is started.
 */
export function protectedTargets(
  policy: SandboxPolicy,
  held: ReadonlyMap<string, unknown> = new Map(),
  lstat: (path: string) => Stats | undefined = lstatOrNone,
): ProtectedTarget[] {
  const targets = new Map<string, ProtectedTarget>()
  for (const [index, root] of policy.write.entries()) {
    for (const name of policy.protect ?? []) {
      const dirLike = name.endsWith('/')
      const parts = name.replace(/\/$/, '').split('/')
      let at = root
      for (const [i, part] of parts.entries()) {
        at = join(at, part)
        const last = i === parts.length - 1
        const stat = held.has(at) ? undefined : lstat(at)
        if (stat === undefined) {
          const parent = lstat(dirname(at))
          if (parent !== undefined && mayCreateIn(parent, policy.user) && !targets.has(at)) {
            targets.set(at, { path: at, state: 'missing', kind: last && !dirLike ? 'file' : 'dir' })
          }
          break
        }
        if (stat.isSymbolicLink() || (!stat.isFile() && !stat.isDirectory())) {
          // A mount lands on what a link leads to, never on the link; a FIFO, a socket or a device
          // cannot be bound over as a file: either could be replaced by what runs later. Refused.
          throw unprotectable(at, name, index, stat.isSymbolicLink() ? 'a symbolic link' : kindName(stat))
        }
        // A file where a directory of the path would be (`.git` of a worktree: "gitdir: ..."): it
        // is what names the hooks then, so it is what is kept.
        if (last || stat.isFile()) {
          if (!targets.has(at)) {
            const field = `the protected path ${name} of ${writeField(index)}`
            targets.set(at, {
              path: at,
              state: 'there',
              kind: stat.isDirectory() ? 'dir' : 'file',
              pin: { identity: `${stat.dev}:${stat.ino}`, field },
            })
          }
          break
        }
      }
    }
  }
  return [...targets.values()]
}

const writeField = (index: number) => `$.runtime.sandbox.fs.write[${index}]`

function kindName(stat: Stats): string {
  if (stat.isFIFO()) return 'a FIFO'
  if (stat.isSocket()) return 'a socket'
  return 'a device'
}

function unprotectable(path: string, name: string, index: number, what: string): RuntimeError {
  return new RuntimeError(
    'RUNTIME_ERR_PROTECTED_PATH',
    `the protected path ${name} of ${writeField(index)} is ${what} (${path}), which a sandbox cannot keep from being replaced by something that runs later: remove it, or point it at a real file; nothing was started`,
  )
}

/**
 * Whether `user` may create an entry in a directory with these modes (write and search for its
 * class: owner, group, others). ACLs are not read: a directory only an ACL opens is left unmasked,
 * a gap stated in decision 0096. Root, and an unknown user, may.
 */
export function mayCreateIn(dir: Stats, user: SandboxPolicy['user']): boolean {
  if (!dir.isDirectory()) return false
  if (user === undefined || user.uid === 0) return true
  const bits = dir.uid === user.uid ? 0o300 : user.groups.includes(dir.gid) ? 0o030 : 0o003
  return (dir.mode & bits) === bits
}

/**
 * The placeholders a mechanism's launches have on the host, counted: concurrent runs in one
 * workspace share one, and the release of the last removes it (if it still is one: an empty
 * directory, an empty regular file).
 */
export class Placeholders {
  readonly #held = new Map<string, number>()

  /** The paths held now (for `protectedTargets`: held ones are masked again, never bound). */
  get held(): ReadonlyMap<string, number> {
    return this.#held
  }

  /**
   * Holds the `missing` targets of a launch: what the launch gets (`Launch.release`, which calls
   * `before` too, a release the launch already had; `Launch.placeholders`).
   */
  hold(targets: readonly ProtectedTarget[], before?: () => void): Pick<Launch, 'release' | 'placeholders'> {
    const placeholders = targets
      .filter((target) => target.state === 'missing')
      .map(({ path, kind }) => ({ path, kind }))
    if (placeholders.length === 0) return before ? { release: before } : {}
    return { release: this.again(placeholders, before), placeholders }
  }

  /**
   * Holds `placeholders` (made by this registry's launches, or by an earlier runtime's for a kept
   * process: `SandboxMechanism.holdPlaceholders`); returns the release, which removes each whose
   * count drops to none, then calls `before`.
   */
  again(placeholders: readonly Placeholder[], before?: () => void): () => void {
    for (const { path } of placeholders) this.#held.set(path, (this.#held.get(path) ?? 0) + 1)
    let released = false
    return () => {
      if (released) return
      released = true
      for (const placeholder of placeholders) {
        const left = (this.#held.get(placeholder.path) ?? 1) - 1
        if (left > 0) this.#held.set(placeholder.path, left)
        else {
          this.#held.delete(placeholder.path)
          removePlaceholder(placeholder)
        }
      }
      before?.()
    }
  }
}
