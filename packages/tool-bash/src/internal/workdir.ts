import { statSync } from 'node:fs'
import { isAbsolute, resolve } from 'node:path'
import { BashError } from '../errors.js'

/** Where a call's command runs. */
export interface WorkdirRequest {
  /** The call's `workdir`: absolute, or relative to the session's working directory. */
  readonly requested: string | undefined
  /** The session's working directory (`SessionInfo.cwd`), when its host gave one. */
  readonly session: string | undefined
  /** The operator's `workdir`, else toolvisor's own working directory. */
  readonly fallback: string
}

/**
 * The directory a command runs in (decision 0031): the call's `workdir`, resolved against the
 * session's working directory when relative; else the session's; else the operator's default.
 * Throws `BASH_ERR_WORKDIR` when it is not a directory: nothing is started.
 */
export function workdirOf(request: WorkdirRequest): string {
  const base = request.session ?? request.fallback
  const wanted = request.requested
  const path = wanted === undefined ? base : isAbsolute(wanted) ? wanted : resolve(base, wanted)
  let why: string | undefined
  try {
    if (!statSync(path).isDirectory()) why = 'not a directory'
  } catch (error) {
    why = (error as NodeJS.ErrnoException).code ?? String(error)
  }
  if (why === undefined) return path
  const which = wanted === undefined ? "the session's working directory" : 'invalid workdir:'
  throw new BashError('BASH_ERR_WORKDIR', `${which} ${path} is not a directory (${why}); nothing was started`)
}
