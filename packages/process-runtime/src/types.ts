import type { TreeUsage } from '@toolvisor/containment'
import type { ProcessSpec, RuntimeSpec } from '@toolvisor/describe-v2'
import type {
  RunAsMechanism,
  RunAsTarget,
  SandboxMechanism,
  SandboxPolicy,
  TerminalSize,
} from '@toolvisor/launchers'
import type { ProcessOutputView, SequencedEvent } from '@toolvisor/process-output'
import type { Account } from '@toolvisor/run-as'
import type { KeptRecord, LostProcess } from '@toolvisor/run-state'
import type { EffectivePolicy } from './internal/environment.js'
import type { LaunchFacts } from './internal/launch-facts.js'
import type { AppliedLimits } from './internal/limits.js'
import type { PlainProcessSpec } from './internal/plain.js'
import type { PrepareInput } from './internal/prepare.js'
import type { Annotation } from './internal/process-kept.js'
import type { StartedWith } from './internal/started-with.js'
import type { RuntimeOptions } from './options.js'

/** A tool after load: its declarations checked against what the operator configured. */
export interface PreparedTool {
  /** Absolute path of the executable. */
  readonly path: string
  /** Its directory. */
  readonly dir: string
  /** The name used in reports (`slug`). */
  readonly name: string
  readonly process: ProcessSpec
  readonly runtime: RuntimeSpec
  /** The sandbox it runs under, when it declared one. */
  readonly sandbox?: { readonly mechanism: SandboxMechanism; readonly policy: SandboxPolicy }
  /**
   * Who it runs as when that is not the runtime's own user: its run_as declaration, or the
   * sandbox user. `mechanism` is absent when the sandbox switches user itself.
   */
  readonly runAs?: { readonly target: RunAsTarget; readonly mechanism?: RunAsMechanism }
  /** That user as the host knows it (for `HOME`, `USER`, `LOGNAME`). */
  readonly account?: Account
  /** Which of the runtime's variables it inherits. */
  readonly environment: EffectivePolicy
  /** The envdir to read at every start. */
  readonly envdir?: string
  /** The working directory (created at load). */
  readonly rundir?: string
  /** The limits it runs under and what enforces them (absent: the runtime's defaults). */
  readonly limits?: AppliedLimits
}

/** The variables every run gets (protocol §1 context environment), set last. */
export interface RunContext {
  readonly sessionId?: string
  readonly turnId?: string
  readonly conversationId?: string
  readonly agentId?: string
}

/** What to start. */
export interface StartOptions {
  readonly tool: PreparedTool
  /** Arguments after the executable (`['run', ...]`, `['check']`, `['describe']`). */
  readonly argv: readonly string[]
  /**
   * The working directory, absolute, over the tool's rundir (a shell command's `workdir`). Under a
   * sandbox it must lie inside the tool's grants, else the start fails naming it.
   */
  readonly cwd?: string
  /** Bytes written to stdin then closed (default: none, closed at once), or `open` to keep it open. */
  readonly stdin?: Uint8Array | 'open'
  /** Extra variables (the `env`-mode arguments), applied after `environment`, before the context. */
  readonly env?: Readonly<Record<string, string>>
  readonly context?: RunContext
  /** Aborting it cancels the process (declared cancel, then SIGKILL after `timeout.stop`). */
  readonly signal?: AbortSignal
  /**
   * Held by a keeper when the runtime has one (its `keeping`, decision 0113; else launched as any):
   * the process outlives this runtime (its dispose, a crash, kill -9), its cgroup and limits with
   * it, for a later runtime on the same state directory to re-adopt. Not on a terminal.
   */
  readonly keep?: boolean
  /** Overrides the tool's `process` (for `describe`, `check`, `help`: oneshot `chunks`). */
  readonly process?: ProcessSpec
  /** A bound on the whole run, in ms (describe and check use 10 s). */
  readonly timeoutMs?: number
  /**
   * Bytes of stdout and of stderr kept in memory before the stream spills, over the operator's
   * `resultBytes`: 0 writes every byte to the spill file from the first one (a background shell,
   * whose full output must be on disk); a small bound makes a cut result point at a spill file.
   */
  readonly resultBytes?: number
  /** Called for each output event as it arrives. */
  readonly onEvent?: (event: SequencedEvent) => void
  /**
   * Run it on a pseudo-terminal of this size (decision 0110): what it shows is its stdout, stdin
   * stays open for keystrokes (`ManagedProcess.terminal`), and there is no stderr. Only a spawner
   * that makes terminals (`@toolvisor/launch-native`) runs it; another fails the start, saying so.
   */
  readonly terminal?: TerminalSize
  /**
   * Asked when a tool with a network allow list reaches a name the list neither allows nor denies
   * (the bash tools: an elicitation): `once`, `session` (added to this launch's list) or `deny`.
   * Absent: refused.
   */
  readonly askNetwork?: (host: string, port: number) => Promise<'once' | 'session' | 'deny'>
}

/** The terminal a process runs on (`StartOptions.terminal`). */
export interface ProcessTerminal {
  /** Its size now. */
  readonly size: TerminalSize
  /**
   * Where its session is recorded, asciicast v2 (`asciinema play` replays it): what it showed,
   * what was typed and the resizes, timed. In the run's spill directory (`ID.cast`, mode 0600),
   * bounded as a spill file (`spillBytes`, the disk budget); removed with the spill files.
   */
  readonly recording: string
  /**
   * Types `bytes` (keystrokes, as a terminal sends them) into it; rejects with
   * `RUNTIME_ERR_STDIN_CLOSED` once it ended or was hung up.
   */
  type(bytes: Uint8Array | string): Promise<void>
  /** Resizes it: the program gets SIGWINCH. A size no terminal has throws. */
  resize(size: TerminalSize): void
  /** Hangs it up: its session gets SIGHUP, and nothing more can be typed. */
  hangUp(): void
}

/** Where a process is in its life (protocol §2 lifecycle). */
export type Lifecycle =
  /** A task queued behind a cap (hyperhive's `pending`), before its process exists. */
  | { readonly status: 'pending' }
  | { readonly status: 'starting' }
  | { readonly status: 'running' }
  | { readonly status: 'stopping' }
  /** A service between two runs (`on_exit: restart`): `n` is the restart about to happen, 1-based. */
  | { readonly status: 'restarting'; readonly n: number }
  | { readonly status: 'exited'; readonly code: number | null; readonly signal: NodeJS.Signals | null }
  | { readonly status: 'failed'; readonly why: string }

/** Why a process ended, beyond its exit code. */
export type EndReason =
  | 'exit'
  | 'cancelled'
  | 'timeout'
  | 'idle'
  | 'not-ready'
  | 'spawn-failed'
  | 'runtime-disposed'
  | 'limit'

/** How a process ended. */
export interface ProcessExit {
  /** `exited` (it ran and ended) or `failed` (it could not start, or never became ready). */
  readonly status: 'exited' | 'failed'
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly reason: EndReason
  /**
   * For `failed`: why. For `exited`: only when toolvisor itself killed the process for a reason of
   * its own, not a stop or a timer (the fork server it was launched from died).
   */
  readonly why?: string
  /** When it ended. */
  readonly at: Date
  /**
   * The limit it hit (decision 0097). One that killed it (memory, cpu_time, file_size) makes it
   * `failed`, with reason `limit`; forks refused at `pids` leave it `exited`, with `why` saying so.
   */
  readonly limit?: LimitHit
  /** What its whole tree used (peak memory, cpu time, peak processes where a cgroup accounted for it; spill bytes). */
  readonly usage?: TreeUsage
}

/** A limit a process hit (`ProcessExit.limit`). */
export interface LimitHit {
  readonly field: 'memory' | 'pids' | 'cpuTime' | 'fileSize'
  readonly value: number
  /** The limit ended the process (the kernel killed it at memory, cpu_time or file_size). */
  readonly ended: boolean
  /** The sentence: `out of memory (limit 64 MiB)`. */
  readonly why: string
  /** The bash marker's text: `killed: memory limit 64 MiB`. */
  readonly marker: string
}

/** A running or finished process. */
export interface ManagedProcess {
  /** Unique in this runtime (`proc-1`, ...). */
  readonly id: string
  readonly tool: string
  /** The spawned pid (also its process group id), once spawned. */
  readonly pid: number | undefined
  readonly startedAt: Date
  /** When this runtime re-adopted it from its keeper (`ProcessRuntime.adopt`, decision 0113). */
  readonly resumedAt?: Date | undefined
  /** Held by a keeper (`StartOptions.keep`): it outlives the runtime. */
  readonly kept?: boolean
  readonly lifecycle: Lifecycle
  /** Settles (never rejects) once the launch did, a moment after `start`: it runs, its pid known, or it failed. */
  readonly launched: Promise<void>
  /** Resolves when the process counts as started (`process.ready`); rejects with `RUNTIME_ERR_NOT_READY`. */
  readonly ready: Promise<void>
  /** Resolves when it ended and all its output was read. Never rejects. */
  readonly exit: Promise<ProcessExit>
  /** What it wrote: events, stderr lines, both streams' bytes; its event subscription. */
  readonly output: ProcessOutputView
  /** Writes one event to stdin, framed as `process.input` declares. */
  write(event: unknown): Promise<void>
  /** Closes stdin. */
  closeStdin(): void
  /** Stops it: the declared cancel, SIGKILL to the group after `timeout.stop` (`force`: at once); its exit. */
  stop(options?: { readonly force?: boolean; readonly reason?: EndReason }): Promise<ProcessExit>
  /** Its tree's use now, or its final account: memory, processes, cpu (from its cgroup), spill bytes. */
  usage(): TreeUsage | undefined
  /** The runtime it was started with, resolved (spec §2.3): user, working directory, envdir, sandbox, limits. */
  readonly startedWith?: StartedWith | undefined
  /** Its terminal, when it was started on one (`StartOptions.terminal`). */
  readonly terminal?: ProcessTerminal | undefined
}

export type { LostProcess } from '@toolvisor/run-state'
export type { NetworkOptions, RuntimeOptions } from './options.js'

/** The options a runtime may be given without a default: they stay optional once it resolved them. */
export type UndefaultedRuntimeOption =
  | 'envdirRoot'
  | 'sandbox'
  | 'runAs'
  | 'environment'
  | 'execHelper'
  | 'spawner'
  | 'ownPaths'
  | 'protectedPaths'
  | 'cgroup'
  | 'limits'

/** A runtime's options as it runs with them: every default filled in (`ProcessRuntime.options`). */
export type ResolvedRuntimeOptions = Readonly<
  Required<Omit<RuntimeOptions, UndefaultedRuntimeOption>> & Pick<RuntimeOptions, UndefaultedRuntimeOption>
>

/** The `runtime` service. */
export interface ProcessRuntime {
  readonly options: ResolvedRuntimeOptions
  /**
   * Checks a loaded tool's runtime declarations against the operator's configuration: envdir root,
   * run_as (a user `runAsAllow` allows, and the mechanism), sandbox mechanism (qualified by
   * running it), paths. Throws a LoadingError naming the field it cannot honour.
   */
  prepare(spec: PrepareInput): Promise<PreparedTool>
  /**
   * A process no describe document declared (`PlainProcessSpec`), checked as a tool's
   * declarations are (the sandbox and run_as through the configured mechanisms, paths pinned,
   * access as the user it runs as), except that its run_as is the operator's own choice and not
   * held to `runAsAllow`; start it with `start` like any prepared tool.
   */
  preparePlain(spec: PlainProcessSpec): Promise<PreparedTool>
  /**
   * The tool at `path` as `describe` and `help` run it: no declarations of its own and, when a
   * sandbox mechanism is configured, a fixed confining policy (its directory readable, nothing
   * writable, no network, no host /tmp, the sandbox user when toolvisor is root), whatever the
   * tool later declares. Throws a LoadingError when that cannot be set up here.
   */
  confined(path: string): Promise<PreparedTool>
  /** What `check --probe` shows of how tools are started: the exec helper and the sandbox user. */
  launchFacts(): LaunchFacts
  /** Starts a process. Spawn failures show in `exit` (status failed), not as a throw. */
  start(options: StartOptions): ManagedProcess
  /** What the previous run (crashed or killed) left running, found at start. */
  lost(): readonly LostProcess[]
  /**
   * What the operator should know of how this runtime was set up, one sentence each: an envdir
   * root others may read, accepted by `envdirPermissions: warn`. Said at start (and once more
   * when a tool's first use finds it), never repeated.
   */
  warnings(): readonly string[]
  /**
   * Every lost process the state directory still keeps (this start's and earlier starts' finds,
   * for `retentionMs`): what an owner that comes back, and the operator, are shown.
   */
  keptLost(): readonly LostProcess[]
  /** Records (atomically, in its run's directory) that the owner of a lost process was told. */
  markTold(lost: Pick<LostProcess, 'run' | 'id'>): void
  /** Records which task (of which kind) and session a process belongs to (for restart reports). */
  annotate(id: string, info: Annotation): void
  /**
   * Records that a task waits to start a process again (a service's restart pending): should this
   * runtime die meanwhile, the next start reports it lost. Returns the release (call it once its
   * next process is started and annotated, or it ended for good).
   */
  waiting(tool: string, info: Pick<Annotation, 'task' | 'session' | 'kind'>): () => void
  /** The kept processes an earlier runtime on this state directory left, each to `adopt` (decision 0113). */
  kept(): KeptRecord[]
  /** Takes a kept process over from its keeper; it fails (`lost`) when its keeper does not answer. */
  adopt(record: KeptRecord, start: StartOptions): ManagedProcess
}

export type { ContainmentFacts, LaunchFacts, NetworkSetup } from './internal/launch-facts.js'
export type { Annotation, PrepareInput }
