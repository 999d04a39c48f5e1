import { type CodeOf, errorFamily } from '@toolvisor/kernel'

/** Every code this package throws. */
export const McpServerErrorCodes = {
  /** `createMcpServer`/`serveStdio` got options it cannot use; the message names the field. */
  INVALID_OPTIONS: 'MCP_ERR_INVALID_OPTIONS',
  /** `connect()` on a server that is, or was, connected: one server serves one connection (one session). */
  ALREADY_CONNECTED: 'MCP_ERR_ALREADY_CONNECTED',
  /**
   * The stdio transport refused to send a message because more than `maxQueuedBytes` already wait
   * for a client that does not read stdout; it closes the session.
   */
  CLIENT_NOT_READING: 'MCP_ERR_CLIENT_NOT_READING',
  /**
   * The stdio transport dropped a progress (or log) notification because answers already wait for
   * the client; the call counts it and goes on.
   */
  NOTIFICATION_DROPPED: 'MCP_ERR_NOTIFICATION_DROPPED',
  /** The bridge cannot reach `toolvisor serve`, or it refuses the token. */
  UPSTREAM: 'MCP_ERR_UPSTREAM',
} as const

/** A code of this package. */
export type McpServerErrorCode = CodeOf<typeof McpServerErrorCodes>

/** An error thrown by the MCP surface, always with an `MCP_ERR_*` code. */
export class McpServerError extends errorFamily<McpServerErrorCode>('mcp-server') {}
