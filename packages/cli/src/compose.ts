import { cacheFileIn, capabilitiesPlugin } from '@toolvisor/capability-backends'
import { describePlugin } from '@toolvisor/describe-v2'
import { Kernel } from '@toolvisor/kernel'
import type { ProcessRuntime, TaskRegistry } from '@toolvisor/process-runtime'
import { RuntimeToken, runtimePlugin, TasksToken } from '@toolvisor/process-runtime'
import { bwrapPlugin } from '@toolvisor/sandbox-bwrap'
import { landlockPlugin } from '@toolvisor/sandbox-landlock'
import { processesPlugin } from '@toolvisor/tool-processes'
import type { BinaryTools, ToolRegistry } from '@toolvisor/toolbox'
import { BinaryToolsToken, ToolsToken, toolboxPlugin } from '@toolvisor/toolbox'
import type { Config } from './config.js'

/** What a composed toolvisor gives a command. */
export interface Composed {
  readonly kernel: Kernel
  readonly tools: ToolRegistry
  readonly binary: BinaryTools
  readonly runtime: ProcessRuntime
  readonly tasks: TaskRegistry
}

/** How to compose. */
export interface ComposeOptions {
  /** Load the configured toolboxes (describe every tool). Default true. */
  readonly loadToolboxes?: boolean
  /** Override the stream yield window (ms). */
  readonly yieldMs?: number
}

/**
 * The composition root: the kernel with every package this CLI ships, in the order their seams
 * need (mechanisms are registered before any tool is loaded, so `prepare` sees them).
 */
export async function compose(config: Config, options: ComposeOptions = {}): Promise<Composed> {
  const kernel = new Kernel()
  try {
    kernel.use(describePlugin)
    await kernel.use(runtimePlugin, {
      ...(config.stateDir ? { stateDir: config.stateDir } : {}),
      ...(config.envdirRoot ? { envdirRoot: config.envdirRoot } : {}),
      ...(config.sandbox ? { sandbox: config.sandbox } : {}),
      ...(config.sandboxUser ? { sandboxUser: config.sandboxUser } : {}),
      ...(config.runAs ? { runAs: config.runAs } : {}),
      ...(config.environment ? { environment: config.environment } : {}),
      ...defined({
        ringEvents: config.ringEvents,
        ringBytes: config.ringBytes,
        ringStderrLines: config.ringStderrLines,
        maxLineBytes: config.maxLineBytes,
      }),
    })
    await Promise.all([
      kernel.use(bwrapPlugin, config.bwrap ? { bwrap: config.bwrap } : {}),
      kernel.use(landlockPlugin, config.landlockLauncher ? { launcher: config.landlockLauncher } : {}),
    ])
    const yieldMs = options.yieldMs ?? config.yieldMs
    await kernel.use(toolboxPlugin, {
      toolboxes: options.loadToolboxes === false ? [] : config.toolboxes,
      // The answer budget is the toolbox's and the processes tool's; the runtime keeps its own
      // in-memory head (which also bounds describe documents) at its default.
      ...defined({ yieldMs, streamResultEvents: config.streamResultEvents, resultBytes: config.resultBytes }),
    })
    await kernel.use(
      processesPlugin,
      defined({ maxEvents: config.maxEvents, resultBytes: config.resultBytes }),
    )
    if (options.loadToolboxes !== false && config.capabilities.length > 0) {
      await kernel.use(capabilitiesPlugin, {
        capabilities: config.capabilities,
        backends: config.backends,
        cacheFile: cacheFileIn(kernel.get(RuntimeToken)!.options.stateDir),
        ...(config.checkTtlMs !== undefined ? { ttlMs: config.checkTtlMs } : {}),
        ...(config.checkTimeoutMs !== undefined ? { checkTimeoutMs: config.checkTimeoutMs } : {}),
      })
    }
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
  }
}

/** The entries whose value is set (a plugin's config takes absent keys, not `undefined` ones). */
function defined<T extends Record<string, unknown>>(
  values: T,
): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>
  }
}
