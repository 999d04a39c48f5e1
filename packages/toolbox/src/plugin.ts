import { ReadBackToken } from '@toolvisor/answers'
import { DescribeToken } from '@toolvisor/describe-v2'
import { definePlugin } from '@toolvisor/kernel'
import { EnvironmentPolicyConfig, RAW_ONESHOT, RuntimeToken } from '@toolvisor/process-runtime'
import { type Sessions, SessionsToken, TasksToken } from '@toolvisor/tasks'
import { z } from 'zod'
import { type BinaryToolDeps, type CallOptions, type LoadedTool, toolsOf } from './binary-tool.js'
import { type HelpOptions, helpTool } from './internal/help.js'
import { oneshotHandler } from './internal/oneshot.js'
import {
  type EntryOptions,
  type LoadOptions,
  type LoadOutcome,
  loadTool,
  loadToolboxes,
  type ToolboxEntry,
} from './loader.js'
import { createModes, type Modes } from './modes.js'
import { createOneshots } from './oneshots.js'
import { createToolRegistry } from './registry.js'
import { type Served, serve } from './serve.js'
import { streamHandler } from './stream.js'
import { BinaryToolsToken, ModesToken, OneshotsToken, ToolsToken } from './tokens.js'
import type { Tool, ToolRegistry } from './types.js'

/** The `binary-tools` service: loads executables as tools, for the toolbox and for other packages. */
export interface BinaryTools {
  /**
   * Loads one executable, under what the operator set for its toolbox when it is in one (`entry`:
   * environment, keepControls, allowDash); throws a LoadingError.
   */
  load(path: string, entry?: EntryOptions): Promise<LoadedTool>
  /** Loads every tool of the toolboxes; failures are reports, never throws. */
  loadToolboxes(dirs: readonly ToolboxEntry[]): Promise<LoadOutcome>
  /** The model-facing tools of a loaded tool (itself, or one per sub-command). */
  tools(loaded: LoadedTool): Tool[]
  /**
   * The tools its mode handler brings along when it is served (a service's `slug.send`); none
   * when its mode has no handler or brings none.
   */
  companions(loaded: LoadedTool): Tool[]
  /** The shared `help` tool for these tools, when any declares help. */
  helpTool(loaded: readonly LoadedTool[]): Tool | undefined
  /**
   * Runs a verb of a loaded tool (`check`) exactly as the tool would run (its runtime, sandbox,
   * envdir), stdout taken whole, bounded by `timeoutMs`.
   */
  run(
    loaded: LoadedTool,
    argv: readonly string[],
    options: { readonly timeoutMs: number; readonly signal?: AbortSignal },
  ): ReturnType<BinaryToolDeps['runtime']['start']>
  /**
   * Serves loaded tools into a registry, the shared `help` tool with them: a tool whose names or
   * mode cannot be served becomes a load report, the others are served. `toolvisor mcp` and
   * `toolvisor check` both take this path.
   */
  serve(registry: ToolRegistry, loaded: readonly LoadedTool[]): Served
  /** The tools the last `serve` serves (what a restarted daemon gives kept processes back to, `adoptKept`). */
  served(): readonly LoadedTool[]
}

/**
 * The operator's `allowDash` override (decision 0099): `true` for every argument of every tool of
 * the toolbox, or per tool slug, `true` for all its arguments or the names of some.
 */
export const AllowDashConfig = z.union([
  z.literal(true),
  z.record(z.string().min(1), z.union([z.literal(true), z.array(z.string().min(1)).min(1)])),
])

/**
 * A toolbox: its directory, or its directory, the environment policy of its tools, whose control
 * codes stay raw and which arguments may take values that start with `-`.
 */
export const ToolboxEntryConfig = z.union([
  z.string().min(1),
  z
    .object({
      path: z.string().min(1),
      environment: EnvironmentPolicyConfig.optional(),
      keepControls: z.union([z.literal(true), z.array(z.string().min(1))]).optional(),
      allowDash: AllowDashConfig.optional(),
    })
    .strict(),
])

/** The toolbox's configuration. */
export const ToolboxConfig = z
  .object({
    toolboxes: z.array(ToolboxEntryConfig).default([]),
    describeTimeoutMs: z.number().int().positive().default(10_000),
    describeConcurrency: z.number().int().positive().default(8),
    helpTimeoutMs: z.number().int().positive().default(10_000),
    yieldMs: z.number().int().nonnegative().default(5_000),
    streamResultEvents: z.number().int().positive().default(100),
    /** The most bytes a model-facing answer holds; default: the runtime's `resultBytes`. */
    resultBytes: z.number().int().positive().optional(),
  })
  .strict()

/** Everything the binary-tools service is shaped by. */
export type BinaryToolsOptions = LoadOptions & CallOptions & HelpOptions

/**
 * Creates the binary-tools service over its dependencies and the mode handlers; with `sessions`,
 * a call in a session nobody opened opens it.
 */
export function createBinaryTools(
  deps: BinaryToolDeps,
  modes: Modes,
  options: BinaryToolsOptions & { readonly sessions?: Sessions },
): BinaryTools {
  const { resultBytes, sessions } = options
  const tools = (loaded: LoadedTool) =>
    toolsOf({ loaded, describe: deps.describe, modes, resultBytes, ...(sessions ? { sessions } : {}) })
  const help = (loaded: readonly LoadedTool[]) => helpTool(loaded, deps, options)
  let last: Served | undefined
  return {
    load: (path, entry) => loadTool(path, deps, options, entry),
    loadToolboxes: (dirs) => loadToolboxes(dirs, deps, options),
    tools,
    companions: (loaded) => modes.get(loaded.spec.process.mode)?.companions?.(loaded) ?? [],
    helpTool: help,
    run: (loaded, argv, run) =>
      deps.runtime.start({
        tool: loaded.prepared,
        argv,
        process: RAW_ONESHOT,
        timeoutMs: run.timeoutMs,
        ...(run.signal ? { signal: run.signal } : {}),
      }),
    serve: (registry, loaded) => {
      last = serve({ registry, modes, toolsOf: tools, helpTool: help }, loaded)
      return last
    },
    served: () => last?.served() ?? [],
  }
}

/**
 * The toolbox as a kernel plugin: provides the `tools` registry, filled with every tool of the
 * configured toolboxes (and the shared `help` tool), the `binary-tools` loader, the `modes` seam
 * (with `oneshot` and `stream` registered) and the `oneshots` record. A call names its session,
 * which `sessions` (`@toolvisor/tasks`) opens when nobody did.
 */
export const toolboxPlugin = definePlugin({
  name: 'toolbox',
  inject: { describe: DescribeToken, runtime: RuntimeToken, tasks: TasksToken, sessions: SessionsToken },
  provides: [ToolsToken, BinaryToolsToken, ModesToken, OneshotsToken],
  config: ToolboxConfig,
  async apply(ctx, config) {
    const { runtime } = ctx.deps
    const options = { ...config, resultBytes: config.resultBytes ?? runtime.options.resultBytes }
    const modes = createModes()
    // Asked for at each answer: `tool-processes`, which provides it, is applied after this plugin.
    const readBack = () => ctx.get(ReadBackToken)
    const oneshots = createOneshots(readBack)
    modes.register('oneshot', oneshotHandler(runtime, oneshots, readBack))
    modes.register('stream', streamHandler(ctx.deps, { ...options, readBack }))
    const binary = createBinaryTools(ctx.deps, modes, { ...options, sessions: ctx.deps.sessions })
    const registry = createToolRegistry()
    const { loaded, reports } = await binary.loadToolboxes(config.toolboxes)
    for (const report of reports) registry.reportLoadError(report)
    const served = binary.serve(registry, loaded)
    ctx.onDispose(() => served.close())
    ctx.provide(ToolsToken, registry)
    ctx.provide(BinaryToolsToken, binary)
    ctx.provide(ModesToken, modes)
    ctx.provide(OneshotsToken, oneshots)
  },
})
