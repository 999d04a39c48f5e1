/**
 * A session's own workspace over HTTP (seed 001: the working directory defaults to the session's
 * own): the client names it in `x-toolvisor-workspace` when it initializes (a bridge's
 * `--workspace DIR`), and the operator's allowlist decides. Decision 0103.
 */
import { realpathSync, statSync } from 'node:fs'
import { isAbsolute, relative, sep } from 'node:path'

/** The header a client names its session's workspace with (absolute path of a directory). */
export const WORKSPACE_HEADER = 'x-toolvisor-workspace'

/** Why a named workspace is refused: the HTTP status (400: malformed, 403: not allowed) and the text. */
export interface WorkspaceRefusal {
  readonly status: 400 | 403
  readonly message: string
}

/**
 * The roots a workspace may be, or lie in, resolved (symlinks followed) once; a root that is not
 * an absolute path of a directory is the reason, as text, for the caller's error.
 */
export function workspaceRoots(roots: readonly string[] | undefined): readonly string[] | string {
  const resolved: string[] = []
  for (const root of roots ?? []) {
    const shown = JSON.stringify(root).slice(0, 200)
    if (typeof root !== 'string' || !isAbsolute(root)) return `${shown} is not an absolute path`
    try {
      const real = realpathSync(root)
      if (!statSync(real).isDirectory()) return `${shown} is not a directory`
      resolved.push(real)
    } catch (error) {
      return `${shown} cannot be used (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`
    }
  }
  return resolved
}

/**
 * The working directory a client named for its session: `undefined` when it named none, its
 * real path when it is an absolute directory inside one of `roots` (symlinks resolved first, so a
 * link cannot lead out), else the refusal.
 */
export function namedWorkspace(
  header: string | string[] | undefined,
  roots: readonly string[],
): { readonly cwd?: string } | WorkspaceRefusal {
  if (header === undefined) return {}
  const shown = JSON.stringify(String(header)).slice(0, 200)
  const refuse = (status: 400 | 403, why: string): WorkspaceRefusal => ({
    status,
    message: `${WORKSPACE_HEADER} ${shown}: ${why}`,
  })
  if (typeof header !== 'string' || header.includes('\0') || !isAbsolute(header)) {
    return refuse(400, 'expected the absolute path of a directory')
  }
  if (roots.length === 0) {
    return refuse(403, 'this server lets no session name its workspace (the operator sets serve.workspaces)')
  }
  let real: string
  try {
    real = realpathSync(header)
    if (!statSync(real).isDirectory()) return refuse(400, 'not a directory')
  } catch (error) {
    return refuse(400, `cannot be used (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`)
  }
  if (!roots.some((root) => inside(real, root))) {
    return refuse(403, `not inside a workspace the operator allows (${roots.join(', ')})`)
  }
  return { cwd: real }
}

function inside(path: string, root: string): boolean {
  const rel = relative(root, path)
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel))
}
