import { type DescribeErrorCode, LoadingError } from '../errors.js'
import type { EventSchemaCompiler } from './schema-compiler.js'

/**
 * One tool being loaded: its path (every error names it), the warnings gathered so far and the
 * compiler of the describe service that loads it.
 */
export interface Load {
  readonly tool: string
  readonly warnings: string[]
  readonly schemas: EventSchemaCompiler
}

/** Throws the LoadingError of the tool being loaded; `field` is a JSON path (`$.args[1].mode`). */
export function fail(
  load: Load,
  code: DescribeErrorCode,
  field: string | undefined,
  reason: string,
  cause?: unknown,
): never {
  const details = field === undefined ? { tool: load.tool, reason } : { tool: load.tool, field, reason }
  throw new LoadingError(code, details, cause === undefined ? undefined : { cause })
}
