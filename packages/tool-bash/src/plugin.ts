import { accessSync, constants } from 'node:fs'
import { isAbsolute } from 'node:path'
import { rendererFor } from '@toolvisor/answers'
import { definePlugin } from '@toolvisor/kernel'
import { MailboxToken } from '@toolvisor/mailbox'
import { pinnedExecutable, RuntimeToken } from '@toolvisor/process-runtime'
import { SessionsToken, TasksToken } from '@toolvisor/tasks'
import { ApprovalToken, ModesToken, ToolsToken } from '@toolvisor/toolbox'
import { BashConfig } from './config.js'
import { BashError } from './errors.js'
import { BashToken, createBashHost, stoppedAtShutdown, stopShells } from './host.js'
import { mailCompletions } from './internal/completion.js'
import { StandingModes } from './internal/escalation.js'
import { bashAdopter } from './internal/kept.js'
import { Launcher } from './internal/launcher.js'
import { TaskCap } from './internal/pending.js'
import { DEFAULT_NETWORK } from './network.js'
import { dshMode } from './profiles/claude-code-like.js'
import type { BashServices } from './profiles/common.js'
import { PROFILE } from './profiles.js'

/**
 * The bash tools as a kernel plugin: registers the configured profile's tools into `tools`
 * (seed 001's `bash`, `bash_output`, `bash_kill` by default), launching through `runtime` and
 * keeping background shells as tasks of `tasks`; provides the host's view (`BashToken`). Reads
 * two services only when they exist (decision 0032): `sessions` (a session's working directory)
 * and `mailbox` (completion mail). Unloading it stops every background shell.
 */
export const bashPlugin = definePlugin({
  name: 'tool-bash',
  inject: { tools: ToolsToken, tasks: TasksToken, runtime: RuntimeToken },
  provides: [BashToken],
  config: BashConfig,
  async apply(ctx, config) {
    const { tools, tasks, runtime } = ctx.deps
    const profile = PROFILE[config.profile]
    const network = config.network ?? DEFAULT_NETWORK
    const launcher = await Launcher.create(runtime, {
      bash: bashExecutable(config.bash),
      killGraceMs: config.killGraceMs,
      cancelSignal: profile.cancelSignal,
      outputBytes: config.outputBytes,
      network,
      ...(config.limits ? { limits: config.limits } : {}),
    })
    const modes = new StandingModes(config.sandbox)
    await refuseUnhonoured(modes, runtime.options.sandbox, () =>
      launcher.launchFor(modes.default, config.workdir ?? process.cwd()),
    )
    const services: BashServices = {
      options: config,
      tasks,
      launcher,
      render: rendererFor(config.keepControls),
      session: (id) => (id === undefined ? undefined : ctx.get(SessionsToken)?.get(id)),
      modes,
      network,
      approval: () => ctx.get(ApprovalToken),
      confined: new Map(),
      cap: new TaskCap(tasks, config.maxTasksPerSession),
      networkHint: profile.networkHint,
    }
    ctx.onDispose(ctx.get(SessionsToken)?.onClose((session) => modes.forget(session.id)) ?? (() => {}))
    const host = createBashHost(tasks)
    // Disposers run last-registered first: the tools and the mail go, then the shells stop (the
    // kept ones run on when the runtime keeps, and an earlier serve's are taken back: decision 0113).
    ctx.onDispose(() => stopShells(tasks, stoppedAtShutdown(tasks, runtime.options.keeping !== undefined)))
    const sessions = () => ctx.get(SessionsToken)
    const adopter = bashAdopter({ runtime, tasks, launcher, sessions })
    const removals = [services.cap.follow(), ctx.get(ModesToken)?.registerKept('bash', adopter) ?? (() => {})]
    ctx.onDispose(() => {
      for (const remove of removals.reverse()) remove()
    })
    for (const make of profile.tools) removals.push(tools.register(make(services)))
    const guidance = profile.guidance && tools.addGuidance?.(profile.guidance)
    if (guidance) removals.push(guidance)
    if (config.profile === 'dsh' && modes.confining) removals.push(tools.register(dshMode(services)))
    const notice = profile.notice
    if (notice) {
      removals.push(
        mailCompletions(
          tasks,
          () => ctx.get(MailboxToken),
          (done) => notice(services, done),
        ),
        // A background task a restart lost is reported in the same words as any other end.
        tasks.wordLost('bash', (task) =>
          task.exit === undefined ? undefined : notice(services, { task, exit: task.exit, observed: false }),
        ),
      )
    }
    ctx.provide(BashToken, host)
  },
})

/**
 * At start-up, the standing mode must be one the configured mechanism honours in the default
 * working directory: a confining mode with no mechanism, or one it refuses, stops the load (never
 * a weaker run).
 */
async function refuseUnhonoured(
  modes: StandingModes,
  mechanism: string | undefined,
  prepare: () => Promise<unknown>,
): Promise<void> {
  if (!modes.confining) return
  if (mechanism === undefined) {
    throw new BashError(
      'BASH_ERR_SANDBOX',
      `tool-bash: the ${modes.default} sandbox mode needs a sandbox mechanism: start toolvisor with --sandbox bwrap, landlock or auto`,
    )
  }
  await prepare().catch((error: unknown) => {
    throw new BashError('BASH_ERR_SANDBOX', `tool-bash: ${(error as Error).message}`, { cause: error })
  })
}

/** The bash to run: the configured one, else `bash` on toolvisor's own PATH (never the command's). */
function bashExecutable(configured: string | undefined): string {
  const path = pinnedExecutable(configured ?? 'bash')
  try {
    if (isAbsolute(path)) {
      accessSync(path, constants.X_OK)
      return path
    }
  } catch {
    throw new BashError(
      'BASH_ERR_NO_BASH',
      `tool-bash: bash ${path} is not an executable file; set the bash option to one`,
    )
  }
  throw new BashError(
    'BASH_ERR_NO_BASH',
    `tool-bash: no bash found on PATH (${process.env.PATH ?? ''}); install bash or set the bash option to its path`,
  )
}
