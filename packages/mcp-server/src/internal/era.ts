import type { Server } from '@modelcontextprotocol/server'

/**
 * The revision a connection speaks, as the SDK's entries name it: `legacy` for 2025-11-25 and
 * before, `modern` for 2026-07-28.
 */
export type ProtocolEra = 'legacy' | 'modern'

/** The first revision of the modern era (revisions are dates, so they compare as strings). */
const MODERN_REVISION = '2026-07-28'

/**
 * Whether `server` speaks a revision without `initialize` (2026-07-28 and on), where a server
 * sends no requests of its own inside a call and a call carries no `task`.
 */
export function speaksModern(server: Server): boolean {
  const version = server.getNegotiatedProtocolVersion()
  return version !== undefined && version >= MODERN_REVISION
}
