import { LoadingError } from '../errors.js'

/** One tool being loaded: its path (every error names it) and the warnings gathered so far. */
export interface Load {
  readonly tool: string
  readonly warnings: string[]
}

/** Throws the LoadingError of the tool being loaded; `field` is a JSON path (`$.args[1].mode`). */
export function fail(
  load: Load,
  code: string,
  field: string | undefined,
  reason: string,
  cause?: unknown,
): never {
  const details = field === undefined ? { tool: load.tool, reason } : { tool: load.tool, field, reason }
  throw new LoadingError(code, details, cause === undefined ? undefined : { cause })
}
