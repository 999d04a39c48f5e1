import type {
  ManagedProcess,
  PreparedTool,
  ProcessRuntime,
  TaskInfo,
  TaskRegistry,
} from '@toolvisor/process-runtime'
import { contextOf, type ToolCallContext } from '@toolvisor/toolbox'

/** The name bash tasks and processes carry (`processes list` shows it as their tool). */
export const BASH_TOOL = 'bash'

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
}

/**
 * Starts `bash -c COMMAND` (`bashArgv`) through the runtime's plain-process entry (no describe document), the
 * one launch path every tool takes: its own process group, the final exec stage, the run's marker
 * (so `setsid` children are swept), the environment policy. Foreground commands are one-shot
 * processes; background ones are tasks of the registry, kind `bash`. Nothing else: reading,
 * waiting, stopping and completion are the registry's.
 */
export class Launcher {
  readonly #runtime: ProcessRuntime
  readonly #foreground: PreparedTool
  readonly #background: PreparedTool
  readonly #outputBytes: number

  private constructor(
    runtime: ProcessRuntime,
    tools: readonly [PreparedTool, PreparedTool],
    outputBytes: number,
  ) {
    this.#runtime = runtime
    this.#foreground = tools[0]
    this.#background = tools[1]
    this.#outputBytes = outputBytes
  }

  /** Prepares both launches once (checked as any tool's declarations are). */
  static async create(runtime: ProcessRuntime, options: LauncherOptions): Promise<Launcher> {
    const common = {
      name: BASH_TOOL,
      file: options.bash,
      framing: 'chunks' as const,
      timeout: { stop: options.killGraceMs / 1000 },
    }
    const tools = await Promise.all([
      runtime.preparePlain({ ...common, mode: 'oneshot', cancel: { signal: 'SIGTERM' } }),
      runtime.preparePlain({ ...common, mode: 'stream', cancel: { signal: options.cancelSignal } }),
    ])
    return new Launcher(runtime, tools, options.outputBytes)
  }

  /**
   * A foreground command, bounded by `timeoutMs` (then the group gets SIGTERM, the grace, SIGKILL)
   * and by the call's signal. A stream past `outputBytes` spills, so a cut result names a file that
   * holds all of it.
   */
  foreground(command: Command, timeoutMs: number): ManagedProcess {
    return this.#runtime.start({
      tool: this.#foreground,
      argv: bashArgv(command.command),
      cwd: command.cwd,
      context: contextOf(command.ctx),
      timeoutMs,
      signal: command.ctx.signal,
      resultBytes: this.#outputBytes,
    })
  }

  /**
   * A background command: a task of `tasks` owned by the calling session, named `name` when given
   * (refused, nothing started, while another task holds it). No timeout unless `timeoutMs`. Every
   * byte goes to its spill files from the first one: the full output is always on disk.
   */
  background(
    tasks: TaskRegistry,
    command: Command,
    options: { name?: string; timeoutMs?: number } = {},
  ): TaskInfo {
    const start = () =>
      this.#runtime.start({
        tool: this.#background,
        argv: bashArgv(command.command),
        cwd: command.cwd,
        context: contextOf(command.ctx),
        resultBytes: 0,
        ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      })
    return tasks.add({
      kind: 'bash',
      tool: BASH_TOOL,
      label: command.command,
      start,
      ...(command.ctx.sessionId !== undefined ? { owner: command.ctx.sessionId } : {}),
      ...(options.name !== undefined ? { id: options.name } : {}),
    })
  }
}
