import { type LimitsSpec, LoadingError } from '@toolvisor/describe-v2'
import type {
  ManagedProcess,
  PlainProcessSpec,
  PreparedTool,
  ProcessRuntime,
  StartOptions,
  TerminalSize,
} from '@toolvisor/process-runtime'
import type { TaskInfo, TaskRegistry } from '@toolvisor/tasks'
import { contextOf, type ToolCallContext } from '@toolvisor/toolbox'
import { BashError } from '../errors.js'
import { policyOf, type SandboxMode } from '../modes.js'
import { type BashNetwork, netPolicyOf } from '../network.js'

/** The name bash tasks and processes carry (`processes list` shows it as their tool). */
export const BASH_TOOL = 'bash'

/**
 * Background tasks are `bash-1`, `bash-2`, ... when the caller names none and the profile says
 * nothing else (ruling 13, seed 001; toolnexus's are `bg-1`, seed 004).
 */
export const BACKGROUND_ID_PREFIX = 'bash-'

/**
 * `bash --norc --noprofile -c COMMAND`: a non-interactive shell reads no startup file, whatever its
 * stdin is. Without `--norc`, bash takes stdin being a socket (the runtime's pipes are socket pairs)
 * for a remote shell daemon's and sources `~/.bashrc` (Debian's build does): a user's prompt setup,
 * version managers' hooks and their locks would run before every command.
 */
export function bashArgv(command: string): string[] {
  return ['--norc', '--noprofile', '-c', command]
}

/** One command to run. */
export interface Command {
  readonly command: string
  /** Absolute, checked (`workdirOf`). */
  readonly cwd: string
  readonly ctx: ToolCallContext
  /** How it is launched: unsandboxed, or under a mode's policy (`Launcher.launchFor`). */
  readonly launch: Launch
  /** Run it on a pseudo-terminal of this size (`tty: true`), under the same launch. */
  readonly terminal?: TerminalSize | undefined
}

/**
 * What a command on a terminal gets besides its terminal: `TERM` says which terminal it is (the
 * emulator the screen is rendered by speaks xterm's codes), whatever toolvisor's own `TERM` is.
 */
export function onTerminal(command: Command): Pick<StartOptions, 'terminal' | 'env'> {
  if (command.terminal === undefined) return {}
  return { terminal: command.terminal, env: { TERM: 'xterm-256color' } }
}

/** The prepared launches of one policy: foreground and background, and what confines them. */
export interface Launch {
  readonly foreground: PreparedTool
  readonly background: PreparedTool
  /** The mode it enforces; absent: bash is not sandboxed (no `bash.sandbox`). */
  readonly mode?: SandboxMode
  /** The mechanism that runs it (`bwrap`, `landlock`); absent: none. */
  readonly mechanism?: string
  /**
   * The user the mode runs commands as when that is not toolvisor's own (the sandbox user, when
   * toolvisor runs as root): a permission that user lacks is the mode's doing (decision 0101).
   */
  readonly user?: string
  /** What `launchFor` made it of: a daemon that re-adopts a kept command prepares it again (decision 0113). */
  readonly of?: LaunchOf
}

/** The arguments of `Launcher.launchFor`. */
export interface LaunchOf {
  readonly mode?: SandboxMode
  readonly root: string
  readonly extra: readonly string[]
}

/** How the launcher runs bash. */
export interface LauncherOptions {
  /** The bash executable, absolute. */
  readonly bash: string
  readonly killGraceMs: number
  /** The first step of a background task's stop (hyperhive's kill is SIGINT). */
  readonly cancelSignal: 'SIGTERM' | 'SIGINT'
  /** Bytes of each stream of a foreground command kept in memory; past them it spills. */
  readonly outputBytes: number
  /** What every command's tree may use (`bash.limits`); absent fields: the runtime's defaults. */
  readonly limits?: LimitsSpec
  /** What the confining modes' commands may reach (`bash.network`, decision 0112). */
  readonly network: BashNetwork
}

/**
 * Starts `bash -c COMMAND` (`bashArgv`) through the runtime's plain-process entry (no describe
 * document), the one launch path every tool takes: its own process group, the final exec stage,
 * the run's marker (so `setsid` children are swept), the environment policy and, for a confining
 * sandbox mode, the configured mechanism with that mode's policy (`policyOf`), checked exactly as
 * a tool's declaration is. Foreground commands are one-shot processes; background ones are tasks
 * of the registry, kind `bash`. Nothing else: reading, waiting, stopping and completion are the
 * registry's.
 */
export class Launcher {
  readonly #runtime: ProcessRuntime
  readonly #options: LauncherOptions
  readonly #plain: Launch
  /** The prepared policies, by mode and writable root: each checked once, then reused. */
  readonly #policies = new Map<string, Promise<Launch>>()

  private constructor(runtime: ProcessRuntime, options: LauncherOptions, plain: Launch) {
    this.#runtime = runtime
    this.#options = options
    this.#plain = plain
  }

  /** Prepares the unsandboxed launches once (checked as any tool's declarations are). */
  static async create(runtime: ProcessRuntime, options: LauncherOptions): Promise<Launcher> {
    const [foreground, background] = await Launcher.#prepare(runtime, options, undefined)
    return new Launcher(runtime, options, { foreground, background })
  }

  static #prepare(
    runtime: ProcessRuntime,
    options: LauncherOptions,
    sandbox: PlainProcessSpec['sandbox'],
  ): Promise<[PreparedTool, PreparedTool]> {
    const common = {
      name: BASH_TOOL,
      file: options.bash,
      framing: 'chunks' as const,
      timeout: { stop: options.killGraceMs / 1000 },
      ...(sandbox ? { sandbox } : {}),
      ...(options.limits ? { limits: options.limits } : {}),
    }
    return Promise.all([
      runtime.preparePlain({ ...common, mode: 'oneshot', cancel: { signal: 'SIGTERM' } }),
      runtime.preparePlain({ ...common, mode: 'stream', cancel: { signal: options.cancelSignal } }),
    ])
  }

  /**
   * The launches of `mode` with `root` (the session's working directory) as the workspace:
   * unsandboxed for no mode and `danger-full-access`, else the mode's policy under the configured
   * mechanism, its network `bash.network` with `extra` (names this one call was allowed) added to
   * its allow list. Prepared once per mode and root, a call's own names each time (they are for
   * that call only). A policy the mechanism cannot honour throws `BASH_ERR_SANDBOX` naming why;
   * it is never run weaker.
   */
  async launchFor(
    mode: SandboxMode | undefined,
    root: string,
    extra: readonly string[] = [],
  ): Promise<Launch> {
    const of = { ...(mode ? { mode } : {}), root, extra }
    return { ...(await this.#launchFor(mode, root, extra)), of }
  }

  #launchFor(mode: SandboxMode | undefined, root: string, extra: readonly string[]): Promise<Launch> {
    if (mode === undefined) return Promise.resolve(this.#plain)
    if (mode === 'danger-full-access') return Promise.resolve({ ...this.#plain, mode })
    if (extra.length > 0) return this.#confined(mode, root, extra)
    const key = `${mode}\0${root}`
    let launch = this.#policies.get(key)
    if (launch === undefined) {
      launch = this.#confined(mode, root, extra)
      this.#policies.set(key, launch)
      // A refusal is not kept: the operator may fix the directory and the next call tries again.
      launch.catch(() => this.#policies.delete(key))
    }
    return launch
  }

  async #confined(
    mode: Exclude<SandboxMode, 'danger-full-access'>,
    root: string,
    extra: readonly string[],
  ): Promise<Launch> {
    const net = netPolicyOf(this.#options.network, extra)
    const prepare = (tmp: 'private' | 'shared') =>
      Launcher.#prepare(this.#runtime, this.#options, policyOf(mode, root, tmp, net))
    let pair: [PreparedTool, PreparedTool]
    try {
      pair = await prepare('private').catch((error: unknown) => {
        // Landlock has no private /tmp: workspace-write then writes the host's (seed 001).
        const tmp = LoadingError.is(error) && error.field === '$.runtime.sandbox.tmp'
        if (mode === 'workspace-write' && tmp) return prepare('shared')
        throw error
      })
    } catch (error) {
      const why = LoadingError.is(error) ? error.reason : (error as Error).message
      const network = LoadingError.is(error)
        ? networkField(error.field, this.#options.network, extra)
        : undefined
      const message =
        network === undefined
          ? `the ${mode} sandbox mode cannot run in ${root}: ${why}`
          : `the ${mode} sandbox mode cannot have its network (${network}): ${why}; bash.network "host" gives the commands the host's network, "none" none`
      throw new BashError('BASH_ERR_SANDBOX', message, { cause: error })
    }
    const [foreground, background] = pair
    const mechanism = foreground.sandbox?.mechanism.name
    const user = foreground.account?.name
    return {
      foreground,
      background,
      mode,
      ...(mechanism !== undefined ? { mechanism } : {}),
      ...(user !== undefined ? { user } : {}),
    }
  }

  /**
   * A foreground command, bounded by `timeoutMs` (then the group gets SIGTERM, the grace, SIGKILL)
   * and by the call's signal. A stream past `outputBytes` spills, so a cut result names a file that
   * holds it (up to the runtime's `spillBytes` cap and disk budget; past them the result says how
   * much was not kept).
   */
  foreground(command: Command, timeoutMs: number): ManagedProcess {
    return this.#runtime.start({
      tool: command.launch.foreground,
      argv: bashArgv(command.command),
      cwd: command.cwd,
      context: contextOf(command.ctx),
      timeoutMs,
      signal: command.ctx.signal,
      resultBytes: this.#options.outputBytes,
      ...onTerminal(command),
    })
  }

  /**
   * A background command: a task of `tasks` owned by the calling session, named `name` when given
   * (refused, nothing started, while another task holds it). No timeout unless `timeoutMs`. Every
   * byte goes to its spill files from the first one: the full output is on disk up to the runtime's
   * `spillBytes` cap and disk budget; past them `bash_output` says how much was not kept, and the
   * newest bytes are still read from memory.
   */
  async background(
    tasks: TaskRegistry,
    command: Command,
    options: { name?: string; idPrefix?: string; timeoutMs?: number; deferred?: boolean } = {},
  ): Promise<TaskInfo> {
    let started: ManagedProcess | undefined
    const start = () => {
      started = this.#runtime.start({
        tool: command.launch.background,
        argv: bashArgv(command.command),
        cwd: command.cwd,
        context: contextOf(command.ctx),
        resultBytes: 0,
        ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
        ...onTerminal(command),
        // Kept past the daemon when it keeps (serve --keep-processes, decision 0113); never on a terminal.
        ...(command.terminal === undefined ? { keep: true } : {}),
      })
      // What a daemon that re-adopts it needs to prepare it again (`adoptBash`, decision 0113).
      const of = command.launch.of
      if (of) this.#runtime.annotate(started.id, { handler: { ...of, command: command.command } })
      return started
    }
    const task = tasks.add({
      kind: 'bash',
      tool: BASH_TOOL,
      label: command.command,
      start,
      ...(command.ctx.sessionId !== undefined ? { owner: command.ctx.sessionId } : {}),
      // Past the session's cap (hyperhive): pending until `TaskCap` begins it.
      ...(options.deferred ? { deferred: true } : {}),
      ...(options.name !== undefined
        ? { id: options.name }
        : { idPrefix: options.idPrefix ?? BACKGROUND_ID_PREFIX }),
    })
    // Told to the model as running: it is, once its launch (a fraction of a millisecond) is done.
    await started?.launched
    return tasks.get(task.id, command.ctx.sessionId)
  }
}

/**
 * Where a refusal of the policy's network comes from, in the operator's or the model's terms:
 * `bash.network`, `bash.network.allow[2]`, or `network_allow "name"` for a name one call added
 * (after the standing entries). Undefined for a refusal of anything else.
 */
function networkField(
  field: string | undefined,
  network: BashNetwork,
  extra: readonly string[],
): string | undefined {
  const net = '$.runtime.sandbox.net'
  if (field === undefined || (field !== net && !field.startsWith(`${net}.`))) return undefined
  const entry = /^\$\.runtime\.sandbox\.net\.(allow|deny)\[(\d+)\]$/.exec(field)
  if (entry === null) return 'bash.network'
  const [, list, index] = entry as unknown as [string, 'allow' | 'deny', string]
  const standing = typeof network === 'string' ? 0 : network[list].length
  const at = Number(index)
  // A call's own names come after the standing ones, named by themselves (they are a subset of its network_allow).
  if (list === 'allow' && at >= standing) return `network_allow ${JSON.stringify(extra[at - standing])}`
  return `bash.network.${list}[${at}]`
}
