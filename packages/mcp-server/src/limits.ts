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
  /** How many calls of one session run at once (32: every parallel fan-out a model makes, far below fd and process limits). */
  maxConcurrentCalls: 32,
  /** How many more wait for a place before a call is refused with an `isError` result. */
  maxQueuedCalls: 64,
  /** Progress notifications a second per call, sustained (10: more than a client can show). */
  progressPerSecond: 10,
  /** Progress notifications a call may send at once before the rate applies (20: a short tool's every event). */
  progressBurst: 20,
  /**
   * The most bytes of the session's mail folded into one result (16 KiB: a few digests, a small
   * part of an answer's budget); 0 never folds (the model reads mail with `processes wait`).
   */
  mailBytes: 16 * 1024,
} as const
