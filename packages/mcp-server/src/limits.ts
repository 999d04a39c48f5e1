/**
 * The bounds of one MCP session, each settable in `McpServerOptions` (and by the operator through
 * `toolvisor mcp` flags). Why these values: `docs/decisions/0015-mcp-boundary-bounds.md`.
 */
export const MCP_DEFAULT_LIMITS = {
  /** The largest message read from the client, in bytes (the SDK's own stdio limit: 10 MiB). */
  maxMessageBytes: 10 * 1024 * 1024,
} as const
