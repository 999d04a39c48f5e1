/**
 * The `tools` seam: the registry of model-facing tools. Every surface (MCP, a host's own loop, the
 * CLI) reads it; every tool package registers into it.
 */
import type { CallCard, ResultCard, ToolAnnotations } from './presentation.js'

/** A JSON Schema object describing a tool's arguments. */
export type ToolInputSchema = Readonly<Record<string, unknown>> & { readonly type: 'object' }

/** One piece of a tool result. */
export type ToolContent = { readonly type: 'text'; readonly text: string }

/** What a call returns to the model. A failed tool is a result with `isError`, never a throw. */
export interface ToolResult {
  readonly content: readonly ToolContent[]
  readonly isError: boolean
  /** The structured form, where the tool produced one (a jsonl oneshot's event array, a JSON answer). */
  readonly structuredContent?: unknown
  /** Facts for the host, not the model: exit code, spill files, the backend that served it, ... */
  readonly meta?: Readonly<Record<string, unknown>>
}

/** A progress report during a call: one event of the tool as it arrives. */
export interface ToolProgress {
  /** How many events so far (1-based). */
  readonly progress: number
  /** A one-line rendering for surfaces that show text. */
  readonly message: string
  /** The event itself. */
  readonly event?: unknown
}

/**
 * The identity of one connection of a surface (one MCP client connection): opaque, compared by
 * identity only, made by the surface and never derived from anything a client sends, so no client
 * can name another's. A session name is not one: several connections may share it.
 */
export type ConnectionId = symbol

/** What a call knows about who is calling. */
export interface ToolCallContext {
  /** The calling session; tasks it starts are owned by it. Absent: visible to every session. */
  readonly sessionId?: string
  /**
   * The connection the call came in on (set by a surface with connections: `mcp-server` sets its
   * own for every call). A question to the user goes back on it (`ApprovalRequest.connection`).
   * Absent: an in-process host, which answers through its own `approval` service.
   */
  readonly connection?: ConnectionId
  readonly turnId?: string
  readonly conversationId?: string
  readonly agentId?: string
  /** Aborted when the caller cancels the call. */
  readonly signal: AbortSignal
  /** Called for each event as it arrives, when the caller wants progress. */
  readonly progress?: (progress: ToolProgress) => void
  /**
   * The caller takes the call as a task (MCP Tasks): a tool with `taskSupport` answers as soon as
   * its task is in the registry, after handing over the task's id and the promise of the answer it
   * would have given at the task's end. A tool without `taskSupport` never calls it.
   */
  readonly asTask?: TaskHandover
}

/** How a tool hands a call over as a task: the registry's task id, and the call's final answer. */
export type TaskHandover = (task: string, answer: Promise<ToolResult>) => void

/** A model-facing tool. */
export interface Tool {
  /** The internal name (`slug`, `slug.command`, `processes`). */
  readonly name: string
  /** What the model reads. */
  readonly description: string
  readonly inputSchema: ToolInputSchema
  /**
   * `optional`: a call may run as a task of the registry (`ToolCallContext.asTask`), as MCP's
   * `execution.taskSupport` says. Absent: never.
   */
  readonly taskSupport?: 'optional'
  /** Runs one call. Resolves with a result; rejects only on a bug, never because the tool failed. */
  call(args: unknown, ctx: ToolCallContext): Promise<ToolResult>
  /** Hints for a client (MCP `annotations`): set only where they are true for this tool. */
  readonly annotations?: ToolAnnotations
  /** The card a UI draws for a call with these arguments. Pure; never throws (a generic card). */
  presentCall?(args: unknown): CallCard
  /** The card of a call's result. Pure; never throws. */
  presentResult?(args: unknown, result: ToolResult): ResultCard
}

/** The `tools` service. */
export interface ToolRegistry {
  /**
   * Adds a tool; returns its removal. A name already taken, or one whose provider-safe form
   * (`.` to `__`) collides with another's, is refused: it throws `TOOLBOX_ERR_NAME_TAKEN`.
   */
  register(tool: Tool): () => void
  /** Every tool, in registration order. */
  list(): readonly Tool[]
  /** A tool by internal or provider-safe name. */
  get(name: string): Tool | undefined
  /** The provider-safe name of a tool (`log_watcher.send` -> `log_watcher__send`). */
  safeName(name: string): string
  /** Calls a tool by name; an unknown name is an error result naming the tools that exist. */
  call(name: string, args: unknown, ctx: ToolCallContext): Promise<ToolResult>
  /** Tools that failed to load (and load warnings), each with its path and reason. */
  loadErrors(): readonly LoadReport[]
  /**
   * Adds a load failure or warning to the report (loaders call it; surfaces print it). Returns its
   * withdrawal, for a failure that is mended later (a tool whose mode gets a handler).
   */
  reportLoadError(report: LoadReport): () => void
  /**
   * Calls `listener` after every change: a tool registered or removed, a load report added. Read
   * `list()` and `loadErrors()` for the new state. Returns the unsubscribe. Listeners run
   * synchronously, in subscription order; one that throws stops neither the change nor the others,
   * and its error becomes a process warning. Optional so that registries
   * written before it stay valid; `createToolRegistry` has it. A surface uses it to announce tools
   * loaded after it started serving (MCP `notifications/tools/list_changed`).
   */
  onChange?(listener: () => void): () => void
  /**
   * Adds a section of guidance for the model (seed 001's `tool:bash` system-prompt section): text a
   * host puts in its system prompt, an MCP server in `initialize`'s `instructions` and as a prompt.
   * A name already there is replaced. Returns its removal. Optional, as `onChange` is.
   */
  addGuidance?(section: Guidance): () => void
  /** The guidance sections, by `order` (then by when they were added). */
  guidance?(): readonly Guidance[]
}

/** One section of guidance for the model, contributed by the package whose tools it is about. */
export interface Guidance {
  /** Its name (`tool:bash`): the MCP prompt's name, and what a host keys the section by. */
  readonly name: string
  /** What it is, in a few words (the MCP prompt's description). */
  readonly description: string
  /** The text itself, exactly as the model should read it. */
  readonly text: string
  /** Where it goes among the sections, lowest first (seed 001's `tool:bash` is 105). */
  readonly order: number
}

/** A tool that failed to load, or loaded with a warning. */
export interface LoadReport {
  /** `error`: the tool is not served; `warning`: it is, and something deserves a look. */
  readonly severity: 'error' | 'warning'
  /** The path of the tool or toolbox entry. */
  readonly tool: string
  /** The full message: `<path>: <field>: <reason>`. */
  readonly message: string
  readonly code: string
  readonly field?: string
}
