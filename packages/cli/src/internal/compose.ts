import { join } from 'node:path'
import type { ReadBack } from '@toolvisor/answers'
import { ReadBackToken, visibleLine } from '@toolvisor/answers'
import { cacheFileIn, capabilitiesPlugin } from '@toolvisor/capability-backends'
import { describePlugin } from '@toolvisor/describe-v2'
import { keeperPlugin } from '@toolvisor/keeper'
import { Kernel } from '@toolvisor/kernel'
import { launchNativePlugin } from '@toolvisor/launch-native'
import { type Mailbox, MailboxToken, mailboxPlugin } from '@toolvisor/mailbox'
import { journalMailboxPlugin } from '@toolvisor/mailbox-journal'
import { McpApprovals, mcpApprovalPlugin } from '@toolvisor/mcp-server'
import { networkPlugin } from '@toolvisor/network'
import type { OwnPathOption, ProcessRuntime } from '@toolvisor/process-runtime'
import { defaultStateDir, RuntimeToken, runtimePlugin, trustStateDir } from '@toolvisor/process-runtime'
import { bwrapPlugin } from '@toolvisor/sandbox-bwrap'
import { landlockPlugin } from '@toolvisor/sandbox-landlock'
import { type Sessions, SessionsToken, type TaskRegistry, TasksToken, tasksPlugin } from '@toolvisor/tasks'
import { bashPlugin } from '@toolvisor/tool-bash'
import { processesPlugin } from '@toolvisor/tool-processes'
import type { BinaryTools, ToolRegistry } from '@toolvisor/toolbox'
import { ApprovalToken, BinaryToolsToken, ToolsToken, toolboxPlugin } from '@toolvisor/toolbox'
import type { Config } from '../config.js'
import { CliError } from '../errors.js'

/** The sandbox mechanisms this CLI composes, and `auto`. */
const SANDBOXES: readonly string[] = ['bwrap', 'landlock', 'auto']
/** The run_as mechanisms the runtime registers. */
const RUN_AS: readonly string[] = ['setpriv', 'runuser']

/** What a composed toolvisor gives a command. */
export interface Composed {
  readonly kernel: Kernel
  readonly tools: ToolRegistry
  readonly binary: BinaryTools
  readonly runtime: ProcessRuntime
  readonly tasks: TaskRegistry
  readonly sessions: Sessions
  readonly mailbox: Mailbox
  /** The words of the `processes` calls that read back what an answer left out (`tool-processes`). */
  readonly readBack: ReadBack | undefined
  /** Where the MCP connections' users are asked (the `approval` service), when bash is served. */
  readonly approvals: McpApprovals | undefined
}

/** How to compose. */
export interface ComposeOptions {
  /** Load the configured toolboxes (describe every tool). Default true. */
  readonly loadToolboxes?: boolean
  /** Override the stream yield window (ms). */
  readonly yieldMs?: number
  /**
   * Keep the sessions' mail in a journal in this directory (`toolvisor serve`: it survives a
   * restart); default: in memory.
   */
  readonly mailJournal?: string
  /** The configuration file this command read (`--config`): no sandbox may see or change it. */
  readonly configFile?: string | undefined
  /** Keep services past this daemon (`serve --keep-processes`, decision 0113): a keeper each. */
  readonly keep?: { readonly reapAfterMs?: number }
  /**
   * More of this command's own paths no sandbox may reach (`serve`: its token file, the socket it
   * listens on); the runtime adds its state directory, the envdir root and the installation.
   */
  readonly ownPaths?: readonly OwnPathOption[]
}

/**
 * The composition root: the kernel with every package this CLI ships. The order of `use` does not
 * matter (each plugin waits for what it injects: the runtime for the mechanism `--sandbox` names,
 * the toolbox for the runtime); `kernel.ready` waits for them all, and reports, naming what is
 * missing, a plugin that would wait forever.
 */
export async function compose(config: Config, options: ComposeOptions = {}): Promise<Composed> {
  refuseUnknownMechanisms(config)
  const kernel = new Kernel()
  const yieldMs = options.yieldMs ?? config.yieldMs
  // Before anything is written in it (the capability cache, the mail journal, the runs).
  const stateDir = trustStateDir(config.stateDir ?? defaultStateDir())
  try {
    if (options.loadToolboxes !== false && config.capabilities.length > 0) {
      kernel.use(capabilitiesPlugin, {
        capabilities: config.capabilities,
        backends: config.backends,
        cacheFile: cacheFileIn(stateDir),
        ...(config.checkTtlMs !== undefined ? { ttlMs: config.checkTtlMs } : {}),
        ...(config.checkTimeoutMs !== undefined ? { checkTimeoutMs: config.checkTimeoutMs } : {}),
      })
    }
    kernel.use(
      processesPlugin,
      defined({
        maxEvents: config.maxEvents,
        resultBytes: config.resultBytes,
        replyMs: config.replyMs,
        omitSend: config.omitSend,
      }),
    )
    useMailbox(kernel, config, options.mailJournal)
    kernel.use(toolboxPlugin, {
      toolboxes: options.loadToolboxes === false ? [] : config.toolboxes,
      // The answer budget is the toolbox's and the processes tool's; the runtime keeps its own
      // in-memory head (which also bounds describe documents) at its default.
      ...defined({ yieldMs, streamResultEvents: config.streamResultEvents, resultBytes: config.resultBytes }),
    })
    useRuntime(kernel, config, stateDir, { ownPaths: ownPathsOf(options), keep: options.keep })
    kernel.use(tasksPlugin)
    kernel.use(describePlugin)
    if (config.bash?.enabled) {
      const { enabled: _, ...bash } = config.bash
      kernel.use(bashPlugin, bash)
      // Escalations ask the user of the calling MCP connection, through elicitation.
      kernel.use(mcpApprovalPlugin)
    }
    await kernel.ready()
  } catch (error) {
    await kernel.dispose().catch(() => {})
    throw error
  }
  return {
    kernel,
    tools: kernel.get(ToolsToken)!,
    binary: kernel.get(BinaryToolsToken)!,
    runtime: kernel.get(RuntimeToken)!,
    tasks: kernel.get(TasksToken)!,
    sessions: kernel.get(SessionsToken)!,
    mailbox: kernel.get(MailboxToken)!,
    readBack: kernel.get(ReadBackToken),
    approvals: approvalsOf(kernel.get(ApprovalToken)),
  }
}

/**
 * The runtime, its sandbox mechanisms, and the native launch path (a cgroup per launch, limits:
 * `launch-native`) unless the operator turned it off (`launch.native: false`).
 */
function useRuntime(
  kernel: Kernel,
  config: Config,
  stateDir: string,
  { ownPaths, keep }: { readonly ownPaths: OwnPathOption[]; readonly keep: ComposeOptions['keep'] },
): void {
  kernel.use(bwrapPlugin, config.bwrap ? { bwrap: config.bwrap } : {})
  kernel.use(landlockPlugin, config.landlockLauncher ? { launcher: config.landlockLauncher } : {})
  const native = config.launch?.native !== false
  if (native) kernel.use(launchNativePlugin)
  kernel.use(networkPlugin, { socketDir: join(stateDir, 'net'), refuseOwnListeners: true })
  // Kept services (serve --keep-processes): the keepers of this state directory.
  if (keep)
    kernel.use(keeperPlugin, {
      stateDir,
      // The keeper's copy of a stream is bounded as the runtime's spill file is.
      ...defined({ reapAfterMs: keep.reapAfterMs, capBytes: config.spillBytes }),
    })
  kernel.use(runtimePlugin, {
    ...runtimeOptions(config, stateDir, ownPaths),
    ...(native ? { spawner: 'native' } : {}),
    ...(keep ? { keep: true } : {}),
  })
}

/** The mailbox: in a journal in `journal` (`toolvisor serve`: it survives a restart), else in memory. */
function useMailbox(kernel: Kernel, config: Config, journal: string | undefined): void {
  const mail = defined({ digestFlushMs: config.digestFlushMs })
  if (journal !== undefined) kernel.use(journalMailboxPlugin, { ...mail, dir: journal })
  else kernel.use(mailboxPlugin, mail)
}

/** The approval service when it is MCP's (connections attach to it), else none to attach to. */
function approvalsOf(approval: unknown): McpApprovals | undefined {
  return approval instanceof McpApprovals ? approval : undefined
}

/** The command's own paths beyond the runtime's: its configuration file, and what the command adds. */
function ownPathsOf(options: ComposeOptions): OwnPathOption[] {
  const file = options.configFile
  return [
    ...(file === undefined
      ? []
      : [{ path: file, kind: 'secret' as const, what: "toolvisor's configuration file" }]),
    ...(options.ownPaths ?? []),
  ]
}

/** The runtime plugin's options from the configuration. */
function runtimeOptions(config: Config, stateDir: string, ownPaths: OwnPathOption[]) {
  return {
    stateDir,
    ...(ownPaths.length > 0 ? { ownPaths } : {}),
    ...(config.envdirRoot ? { envdirRoot: config.envdirRoot } : {}),
    ...(config.envdirPermissions ? { envdirPermissions: config.envdirPermissions } : {}),
    ...(config.sandbox ? { sandbox: config.sandbox } : {}),
    ...(config.sandboxUser ? { sandboxUser: config.sandboxUser } : {}),
    ...(config.runAs ? { runAs: config.runAs } : {}),
    ...(config.runAsAllow ? { runAsAllow: config.runAsAllow } : {}),
    ...(config.environment ? { environment: config.environment } : {}),
    ...(config.protectedPaths ? { protectedPaths: config.protectedPaths } : {}),
    ...(config.cgroup !== undefined ? { cgroup: config.cgroup } : {}),
    network: {
      gates: true,
      ...defined({
        ceiling: config.network?.allow,
        host: config.network?.host,
        force: config.network?.force,
      }),
    },
    ...(config.limits?.defaults || config.limits?.ceilings
      ? { limits: defined({ defaults: config.limits.defaults, ceilings: config.limits.ceilings }) }
      : {}),
    ...defined({
      ringEvents: config.ringEvents,
      ringBytes: config.ringBytes,
      ringStderrLines: config.ringStderrLines,
      maxLineBytes: config.maxLineBytes,
      stateBytes: config.stateBytes,
      spillBytes: config.spillBytes,
    }),
  }
}

/** `--sandbox` and `--run-as` name mechanisms this CLI has, or it is a usage error at once. */
function refuseUnknownMechanisms(config: Config): void {
  for (const [flag, name, known] of [
    ['--sandbox', config.sandbox, SANDBOXES],
    ['--run-as', config.runAs, RUN_AS],
  ] as const) {
    if (name !== undefined && !known.includes(name)) {
      throw new CliError(
        'CLI_ERR_USAGE',
        `${flag} ${name}: no such mechanism here; the mechanisms are ${known.join(', ')}`,
      )
    }
  }
}

/** The bounds of each MCP session: `limits` without the launch limits (`defaults`, `ceilings`). */
export function sessionBounds(config: Config) {
  const { defaults: _defaults, ceilings: _ceilings, ...bounds } = config.limits ?? {}
  return defined(bounds)
}

/** The entries whose value is set (a plugin's config takes absent keys, not `undefined` ones). */
export function defined<T extends Record<string, unknown>>(
  values: T,
): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>
  }
}

/**
 * Tells the operator (stderr) what this start found: the runtime's warnings, and what it found
 * lost (processes an earlier run still had when it died, now killed). The session that owned each
 * sees it in `processes list` when it comes back.
 */
export function reportLost(composed: Composed, say: (line: string) => void): void {
  // The runtime's start-up warnings first (an envdir root others may read, accepted by warn).
  for (const warning of composed.runtime.warnings()) say(`toolvisor: warning: ${warning}`)
  const lost = composed.runtime.lost()
  if (lost.length === 0) return
  // Session names come from clients: each field stays on its line (`say` escapes the rest).
  const each = lost.map(
    (p) =>
      `${visibleLine(p.task ?? p.id)} ${visibleLine(p.tool)}${p.session ? ` (session ${visibleLine(p.session)})` : ''}`,
  )
  say(
    `toolvisor: an earlier run ended with ${lost.length} process(es) running; they are stopped and reported lost: ${each.join(', ')} (toolvisor check --probe lists them)`,
  )
}
