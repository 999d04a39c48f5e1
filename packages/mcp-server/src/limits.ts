/**
 * The bounds of one MCP session, each settable in `McpServerOptions` (and by the operator through
 * `toolvisor mcp` flags). Why these values: `docs/decisions/0015-mcp-boundary-bounds.md`.
 */
export const MCP_DEFAULT_LIMITS = {
  /** The largest message read from the client, in bytes (the SDK's own stdio limit: 10 MiB). */
  maxMessageBytes: 10 * 1024 * 1024,
  /**
   * How many bytes may wait for a client that does not read stdout before the session fails
   * (16 MiB: twice what 32 calls with full 256 KiB results give at once).
   */
  maxQueuedBytes: 16 * 1024 * 1024,
} as const
