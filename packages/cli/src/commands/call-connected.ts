import { visibleText } from '@toolvisor/answers'
import { callUpstream } from '@toolvisor/mcp-server'
import type { Config } from '../config.js'
import { CliError } from '../errors.js'
import type { FlagValues } from '../internal/flags.js'
import { withShutdownSignals } from '../internal/signals.js'
import { isToolPath } from '../internal/toolboxes.js'
import type { Io } from '../output.js'
import { daemonOf } from './bridge.js'

/** What `toolvisor call --connect` is given: the checked command line. */
export interface ConnectedLine {
  readonly values: FlagValues
  readonly config: Config
  readonly path: string
  readonly args: Record<string, unknown>
}

/**
 * `toolvisor call TOOL [ARGS_JSON] --connect ADDR [--session NAME]`: the call is made in a running
 * `toolvisor serve`, in the session NAME (default `cli`), as an MCP client makes it (decision
 * 0114). What it starts stays with the daemon in that session: the next call reads it (`processes`),
 * talks to it (`TOOL__send`) or stops it. Exit 0, 1 when the tool failed, 2 when the daemon cannot
 * be reached or refuses the token, 130 when cancelled (the call is cancelled in the daemon).
 */
export async function connectedCall(
  line: ConnectedLine,
  io: Io,
  signals: NodeJS.EventEmitter,
): Promise<number> {
  const { values, config, path, args } = line
  const { connect, tokenFile, workspace, progress } = config.call ?? {}
  if (connect === undefined) throw new Error('connectedCall without --connect')
  const refuse = (flag: string, why: string) => {
    throw new CliError('CLI_ERR_USAGE', `${flag} has no meaning with --connect: ${why}`)
  }
  if (typeof values.command === 'string')
    refuse('--command', 'name the tool as the model does (git_lite__log)')
  if (config.call?.yieldMs !== undefined)
    refuse('--yield-ms', "the daemon's yield window applies (serve's yieldMs)")
  if (isToolPath(path))
    throw new CliError(
      'CLI_ERR_USAGE',
      `with --connect, TOOL is a name the daemon serves (log_watcher, processes), not a file: ${path}`,
    )
  const { upstream, token } = daemonOf({ connect, tokenFile, stateDir: config.stateDir })
  const session = config.call?.session ?? 'cli'
  const stop = withShutdownSignals(signals)
  try {
    const result = await callUpstream(
      { upstream, token, session, ...(workspace !== undefined ? { workspace } : {}) },
      { name: path, arguments: args },
      {
        signal: stop.signal,
        ...(progress
          ? { progress: (n: number, message?: string) => io.err(`[${n}] ${visibleText(message ?? '')}\n`) }
          : {}),
      },
    )
    // The blocks as the model reads them: the answer, then the session's mail folded after it.
    const text = result.content
      .map((block) => (block.type === 'text' ? block.text : `[${block.type}]`))
      .join('\n')
    if (text.length > 0) io.out(text.endsWith('\n') ? text : `${text}\n`)
    return result.isError ? 1 : 0
  } catch (error) {
    if (stop.signal.aborted) return 130
    throw error
  } finally {
    stop.off()
  }
}
