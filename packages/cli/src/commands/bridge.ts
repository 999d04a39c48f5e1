import { join, resolve } from 'node:path'
import { bridgeStdio, type Upstream } from '@toolvisor/mcp-server'
import { defaultStateDir } from '@toolvisor/process-runtime'
import { CliError } from '../errors.js'
import { withShutdownSignals } from '../internal/signals.js'
import { tokenIn } from '../internal/token.js'
import { type Io, logTo } from '../output.js'

/** The flags of `toolvisor mcp --connect`. */
export interface BridgeFlags {
  readonly connect: string
  readonly session: string | undefined
  readonly tokenFile: string | undefined
  /** `--workspace DIR`: the session's working directory, as the daemon's workspace roots allow. */
  readonly workspace: string | undefined
  readonly stateDir: string | undefined
}

/**
 * `toolvisor mcp --connect ADDR --session NAME`: a stdio server with no process management of its
 * own that forwards every request to `toolvisor serve` under the session NAME. Exit 2 when the
 * daemon cannot be reached or refuses the token.
 */
export async function bridgeCommand(
  flags: BridgeFlags,
  io: Io,
  signals: NodeJS.EventEmitter,
): Promise<number> {
  if (flags.session === undefined) {
    throw new CliError(
      'CLI_ERR_USAGE',
      '--connect needs --session NAME: the session every turn of this client shares',
    )
  }
  const { upstream, token } = daemonOf(flags)
  const stop = withShutdownSignals(signals)
  try {
    await bridgeStdio({
      upstream,
      token,
      session: flags.session,
      ...(flags.workspace !== undefined ? { workspace: flags.workspace } : {}),
      signal: stop.signal,
      log: logTo(io),
    })
    return 0
  } finally {
    stop.off()
  }
}

/** The daemon `--connect` names (a URL, HOST:PORT or unix:PATH) and its token (`--token-file`, else STATE_DIR's). */
export function daemonOf(flags: Pick<BridgeFlags, 'connect' | 'tokenFile' | 'stateDir'>): {
  readonly upstream: Upstream
  readonly token: string
} {
  const upstream = flags.connect.startsWith('unix:')
    ? { socket: resolve(flags.connect.slice(5)) }
    : { url: flags.connect.includes('://') ? flags.connect : `http://${flags.connect}/mcp` }
  const file = resolve(flags.tokenFile ?? join(flags.stateDir ?? defaultStateDir(), 'serve.token'))
  return { upstream, token: tokenIn(file, flags.tokenFile !== undefined, false) }
}
