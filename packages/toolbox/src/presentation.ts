/**
 * How a tool's calls are drawn in a UI (seed 001's `presentCall`/`presentResult`): each tool
 * returns a `card`-tagged render intent, so a UI never special-cases tool names. Both are pure and
 * display-only (they also run on a replay of logged arguments): a malformed or older argument
 * shape gets a generic card, never an exception.
 */

/** A foreground command: a terminal card titled with the exact command. */
export interface TerminalCallCard {
  readonly card: 'terminal'
  /** The exact command. */
  readonly title: string
  /** The model's one-line summary, drawn above the card. */
  readonly description?: string
  /** The call's `workdir` as given (relative: the UI resolves it against the session's cwd). */
  readonly cwd?: string
}

/** Anything else: a title, what kind of action it is, the raw input and lines of content. */
export interface GenericCard {
  readonly card: 'generic'
  readonly title: string
  /** `execute`, `read`, `delete`, ... (ACP's tool kinds). */
  readonly kind?: string
  /** The input as the UI should show it (a command, a task id). */
  readonly rawInput?: unknown
  readonly content?: readonly string[]
}

/** The result of a foreground command: its raw output and parsed exit status (an exit pill). */
export interface TerminalResultCard {
  readonly card: 'terminal'
  readonly title?: string
  readonly output?: string
  readonly exitCode?: number
  readonly signal?: string
}

/** A call's card. */
export type CallCard = TerminalCallCard | GenericCard

/** A result's card. */
export type ResultCard = TerminalResultCard | GenericCard

/** MCP's tool annotations: hints, each saying the truth for that tool when set. */
export interface ToolAnnotations {
  readonly title?: string
  readonly readOnlyHint?: boolean
  readonly destructiveHint?: boolean
  readonly idempotentHint?: boolean
  readonly openWorldHint?: boolean
}
