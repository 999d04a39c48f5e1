/**
 * The normalised form of a describe document: what every other package reads. Parsing (zod) and
 * defaults live in this package; nothing else looks at raw describe JSON.
 */

/** How an argument value reaches the tool (protocol §1). */
export type ArgMode = 'positional' | 'dashdashspace' | 'dashdashequal' | 'stdin' | 'env'

/** The JSON Schema types an argument may have in the model-facing schema (ruling 2). */
export type BackingType = 'string' | 'number' | 'integer' | 'boolean'

/** One declared argument. */
export interface ArgSpec {
  /** Key in the model's arguments, and the flag name verbatim. */
  readonly name: string
  /** Shown to the model. */
  readonly description: string
  /** The free-form display hint (`string`, `filepath`, ...). */
  readonly type: string
  /** The model-facing JSON Schema type (anything unsupported was mapped to `string`, with a warning). */
  readonly backingType: BackingType
  /** `single` = required, `optional` = may be omitted. */
  readonly arity: 'single' | 'optional'
  /** `arity === 'single'`. */
  readonly required: boolean
  /** How the value reaches the tool. */
  readonly mode: ArgMode
  /**
   * `true` when the tool declared `"allow_dash": true` (protocol 2): a `positional` or
   * `dashdashspace` value may start with `-`. Absent: such a value is refused before the tool runs
   * (it would reach argv as an option), except a number for a `number` or `integer` argument.
   */
  readonly allowDash?: boolean
}

/** What the model gets when a successful run printed exactly 0 bytes. */
export type EmptyResult =
  | { readonly tag: 'DoNothing' }
  | { readonly tag: 'AddMessage'; readonly contents: string }

/** How stdout is cut into events. */
export type Framing = 'jsonl' | 'lines' | 'chunks'

/** A JSON Schema document as a tool declared it. */
export type JsonSchema = Readonly<Record<string, unknown>> | boolean

/** A compiled validator: `undefined` when the value matches, else a readable reason. */
export type EventValidator = (value: unknown) => string | undefined

/** `process.output`. */
export interface OutputSpec {
  readonly framing: Framing
  /** The declared event schema (jsonl only), as declared. */
  readonly event?: JsonSchema
  /** Compiled once at load from `event`. */
  readonly validate?: EventValidator
}

/** `process.input`. */
export interface InputSpec {
  readonly framing: 'jsonl' | 'lines'
  readonly event?: JsonSchema
  readonly validate?: EventValidator
}

/** `process.digest` (services only). */
export type DigestSpec =
  | { readonly per: 'round' }
  | { readonly per: 'events'; readonly n: number }
  | { readonly per: 'seconds'; readonly n: number }

/** `process.ready`, with the regex compiled for `line`. */
export type ReadySpec =
  | { readonly kind: 'line'; readonly match: string; readonly regex: RegExp }
  | { readonly kind: 'exit' }
  | { readonly kind: 'immediate' }

/** `process`, with every default applied (v1 tools get a oneshot with `chunks` framing). */
export interface ProcessSpec {
  readonly mode: 'oneshot' | 'stream' | 'service'
  readonly output: OutputSpec
  /** Absent: stdin gets the `stdin`-mode arguments and is closed (v1). */
  readonly input?: InputSpec
  readonly digest: DigestSpec
  readonly ready: ReadySpec
  /**
   * `process.terminal` (house ruling, decision 0110): run on a pseudo-terminal of this size. Its
   * output is what the terminal shows (framing `chunks`), its input keystrokes; a stream or a
   * service only.
   */
  readonly terminal?: TerminalSize
}

/** A terminal's size, in character cells. */
export interface TerminalSize {
  readonly columns: number
  readonly rows: number
}

/** `runtime.sandbox` as declared (paths not yet resolved: that is the runtime's job at load). */
export interface SandboxDeclaration {
  readonly fs: { readonly read: readonly string[]; readonly write: readonly string[] }
  /**
   * `host`, `none`, or an allow list (issue 32): names and addresses reached through toolvisor's
   * proxy, names never reached, ports published to the host's loopback.
   */
  readonly net:
    | 'host'
    | 'none'
    | {
        readonly allow: readonly string[]
        readonly deny: readonly string[]
        readonly publish: readonly number[]
      }
  /**
   * `none` comes only from a plain process spec (a document declares `shared` or `private`): no
   * /tmp of the host; a private one where the mechanism has a mount namespace, none otherwise.
   */
  readonly tmp: 'shared' | 'private' | 'none'
  /** Which fields the document actually named (`fs.read`, `fs.write`, `net`, `tmp`). */
  readonly declared: readonly ('fs.read' | 'fs.write' | 'net' | 'tmp')[]
}

/** `runtime.run_as`. */
export interface RunAsDeclaration {
  readonly user: string
  readonly group?: string
}

/** The first step of a cancel or stop. */
export type CancelSpec = { readonly signal: 'SIGTERM' | 'SIGINT' } | { readonly send: unknown }

/** `runtime.timeout`, in seconds. */
export interface TimeoutSpec {
  readonly start?: number
  readonly stop?: number
  /** `null`: never. */
  readonly idle?: number | null
}

/**
 * `runtime.limits` (decision 0097): what the tool's whole process tree may use. Absent fields
 * take the operator's defaults; none may exceed the operator's ceilings.
 */
export interface LimitsSpec {
  /** Bytes of memory for the whole tree (swap included where the host accounts for it). */
  readonly memory?: number
  /** Processes and threads the tree may hold at once. */
  readonly pids?: number
  /** CPU bandwidth: a share of one core (0.5: half a core). */
  readonly cpu?: number
  /** The largest file a process of the tree may write, in bytes. */
  readonly fileSize?: number
  /** Open descriptors per process. */
  readonly openFiles?: number
  /** Seconds of CPU time per process. */
  readonly cpuTime?: number
}

/** `runtime`, validated, with defaults (`environment` {}, `onExit` report, `cancel` SIGTERM). */
export interface RuntimeSpec {
  readonly runAs?: RunAsDeclaration
  readonly sandbox?: SandboxDeclaration
  readonly envdir?: string
  readonly environment: Readonly<Record<string, string>>
  readonly rundir?: string
  readonly timeout: TimeoutSpec
  readonly onExit: 'report' | 'restart' | 'fail'
  readonly cancel: CancelSpec
  /** What the tree may use, as declared (the operator's defaults and ceilings apply at load). */
  readonly limits?: LimitsSpec
}

/** One entry of `commands`: its own model-facing tool, run as `TOOL run <name> <args...>`. */
export interface CommandSpec {
  readonly name: string
  /** `slug.name`. */
  readonly internalName: string
  readonly description: string
  readonly args: readonly ArgSpec[]
}

/** A loaded tool: everything the runtime and the tool registry need, with defaults applied. */
export interface ToolSpec {
  /** Absolute path of the executable. */
  readonly path: string
  /** Its directory (relative runtime paths are resolved against it). */
  readonly dir: string
  readonly protocol: 1 | 2
  readonly slug: string
  readonly description: string
  readonly args: readonly ArgSpec[]
  readonly emptyResult?: EmptyResult
  /** The tool answers `TOOL check` (v2). */
  readonly check: boolean
  /** The tool answers `TOOL help [command]` (v2). */
  readonly help: boolean
  readonly commands: readonly CommandSpec[]
  readonly process: ProcessSpec
  readonly runtime: RuntimeSpec
  /** Load warnings (unsupported backing type, optional positional before a positional, ...). */
  readonly warnings: readonly string[]
}

/** A JSON Schema object for a tool's arguments, as the model sees it. */
export interface InputSchema {
  readonly type: 'object'
  readonly properties: Readonly<Record<string, { readonly type: BackingType; readonly description: string }>>
  readonly required: readonly string[]
  readonly additionalProperties: false
}

/** What a call becomes: argv after the executable, stdin bytes, extra environment. */
export interface RenderedCall {
  /** `['run', ...]`, or `['run', command, ...]` for a sub-command. */
  readonly argv: readonly string[]
  /** The `stdin`-mode values, each followed by `\n`; empty when there are none. */
  readonly stdin: Uint8Array
  /** The `env`-mode values, by variable name. */
  readonly env: Readonly<Record<string, string>>
}
