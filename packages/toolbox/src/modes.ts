import type { ProcessSpec } from '@toolvisor/describe-v2'
import type {
  KeptRecord,
  RunContext,
  SequencedEvent,
  StartOptions,
  TerminalSize,
} from '@toolvisor/process-runtime'
import type { LoadedTool } from './binary-tool.js'
import { ToolboxError } from './errors.js'
import type { Tool, ToolCallContext, ToolResult } from './types.js'

/** A process mode a tool declares (`$.process.mode`). */
export type ProcessMode = ProcessSpec['mode']

/** What a call starts: the tool and what its arguments rendered to, before a mode runs it. */
export interface ModeStart {
  readonly tool: StartOptions['tool']
  readonly argv: readonly string[]
  readonly stdin: Uint8Array
  readonly env: Readonly<Record<string, string>>
  readonly context: RunContext
  /** The terminal the tool declared (`process.terminal`): it runs on one of this size. */
  readonly terminal?: TerminalSize
}

/** How a call's answer is shaped: the same for every mode. */
export interface ResultRules {
  /** The most bytes a model-facing answer holds (the rest is elided, and the note says how to read it). */
  readonly resultBytes: number
  /** Keep terminal control codes raw in this tool's output (the operator's choice); default escaped. */
  readonly keepControls: boolean
}

/** One call of a tool, as a mode handler receives it. */
export interface ModeCall {
  /** The internal name of the model-facing tool (`slug`, `slug.command`). */
  readonly name: string
  readonly loaded: LoadedTool
  readonly start: ModeStart
  readonly ctx: ToolCallContext
  readonly rules: ResultRules
  /** Reports one output event as progress (absent when the caller wants none). */
  readonly progress: ((event: SequencedEvent) => void) | undefined
}

/** Runs the calls of the tools of one process mode. */
export interface ModeHandler {
  /** Runs one call to its answer. A failed tool is an `isError` result, never a throw. */
  call(call: ModeCall): Promise<ToolResult>
  /**
   * The model-facing tools a loaded tool of this mode brings along (a service's `slug.send`),
   * served and named-checked with the tool itself, all or none (`binary-tools.serve`), so
   * `toolvisor check` and `toolvisor mcp` agree on them. Absent: none.
   */
  companions?(loaded: LoadedTool): Tool[]
  /**
   * True: a call whose context has `asTask` answers as soon as its task is registered and hands
   * the task over (MCP Tasks); the tools of this mode say `taskSupport: 'optional'`.
   */
  readonly tasks?: boolean
  /**
   * Takes over a kept process of this mode an earlier daemon started (decision 0113): its task
   * under the same id and owner, its process through `runtime.adopt`. Throws when it cannot.
   * Absent: the mode keeps nothing (`adoptKept` stops what it finds of it).
   */
  adopt?(record: KeptRecord, loaded: LoadedTool): void
}

/**
 * The `modes` seam: which package runs the tools of each process mode. The toolbox registers
 * `oneshot` and `stream`; `service` is registered by the package that serves it. A tool whose mode
 * has no handler does not load; it is served as soon as a handler for its mode is registered.
 */
export interface Modes {
  /** Registers the handler of `mode`; returns its removal. A mode already handled is refused. */
  register(mode: ProcessMode, handler: ModeHandler): () => void
  /** The handler of `mode`, if one is registered. */
  get(mode: ProcessMode): ModeHandler | undefined
  /** The modes with a handler, in registration order. */
  list(): ProcessMode[]
  /** Calls `listener` after each registration; returns the unsubscription. */
  onRegister(listener: (mode: ProcessMode) => void): () => void
  /**
   * Registers who takes back a kept process of a task kind no tool mode runs (the bash tools'
   * `bash`, decision 0113; a mode's own are its handler's `adopt`); returns its removal.
   */
  registerKept(kind: string, adopt: KeptAdopter): () => void
  /** Who takes back a kept process of `kind`, if anyone registered. */
  keptAdopter(kind: string): KeptAdopter | undefined
}

/** Takes back a kept process an earlier daemon started (its task, its process through `runtime.adopt`); throws when it cannot. */
export type KeptAdopter = (record: KeptRecord) => Promise<void>

/** Creates an empty `modes` registry. */
export function createModes(): Modes {
  const handlers = new Map<ProcessMode, ModeHandler>()
  const listeners = new Set<(mode: ProcessMode) => void>()
  const adopters = new Map<string, KeptAdopter>()
  return {
    register(mode, handler) {
      if (handlers.has(mode)) {
        throw new ToolboxError(
          'TOOLBOX_ERR_MODE_TAKEN',
          `process mode "${mode}" already has a handler; unregister it before registering another`,
        )
      }
      handlers.set(mode, handler)
      for (const listener of listeners) listener(mode)
      return () => {
        if (handlers.get(mode) === handler) handlers.delete(mode)
      }
    },
    get: (mode) => handlers.get(mode),
    list: () => [...handlers.keys()],
    onRegister(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    registerKept(kind, adopt) {
      adopters.set(kind, adopt)
      return () => {
        if (adopters.get(kind) === adopt) adopters.delete(kind)
      }
    },
    keptAdopter: (kind) => adopters.get(kind),
  }
}

/** Why a tool of `mode` does not load: no handler runs it here. */
export function unsupportedMode(mode: ProcessMode, modes: Modes): string {
  const served = modes.list().join(' and ') || 'no mode'
  if (mode === 'service')
    return `service tools need the service mode handler of @toolvisor/tool-processes (processesPlugin), which this toolvisor does not compose; it runs ${served} tools`
  return `no handler runs ${mode} tools here; this toolvisor runs ${served} tools`
}
