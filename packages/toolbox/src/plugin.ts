import { DescribeToken } from '@toolvisor/describe-v2'
import { definePlugin } from '@toolvisor/kernel'
import { EnvironmentPolicyConfig, RAW_ONESHOT, RuntimeToken, TasksToken } from '@toolvisor/process-runtime'
import { z } from 'zod'
import { type BinaryToolDeps, type CallOptions, type LoadedTool, toolsOf } from './binary-tool.js'
import { helpTool } from './help.js'
import {
  type LoadOptions,
  type LoadOutcome,
  loadTool,
  loadToolboxes,
  reportOf,
  type ToolboxEntry,
} from './loader.js'
import { createToolRegistry } from './registry.js'
import { BinaryToolsToken, ToolsToken } from './tokens.js'
import type { Tool, ToolRegistry } from './types.js'

/** The `binary-tools` service: loads executables as tools, for the toolbox and for other packages. */
export interface BinaryTools {
  /** Loads one executable; throws a LoadingError. */
  load(path: string): Promise<LoadedTool>
  /** Loads every tool of the toolboxes; failures are reports, never throws. */
  loadToolboxes(dirs: readonly ToolboxEntry[]): Promise<LoadOutcome>
  /** The model-facing tools of a loaded tool (itself, or one per sub-command). */
  tools(loaded: LoadedTool): Tool[]
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
  /** Registers tools, turning a name collision into a load report instead of a throw. */
  register(registry: ToolRegistry, loaded: LoadedTool): void
}

/** A toolbox: its directory, or its directory and the environment policy of its tools. */
export const ToolboxEntryConfig = z.union([
  z.string().min(1),
  z.object({ path: z.string().min(1), environment: EnvironmentPolicyConfig.optional() }).strict(),
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
  })
  .strict()

/** Creates the binary-tools service over its dependencies. */
export function createBinaryTools(
  deps: BinaryToolDeps,
  options: LoadOptions & CallOptions & { readonly helpTimeoutMs: number },
): BinaryTools {
  return {
    load: (path) => loadTool(path, deps, options),
    loadToolboxes: (dirs) => loadToolboxes(dirs, deps, options),
    tools: (loaded) => toolsOf(loaded, deps, options),
    helpTool: (loaded) => helpTool(loaded, deps, options.helpTimeoutMs),
    run: (loaded, argv, run) =>
      deps.runtime.start({
        tool: loaded.prepared,
        argv,
        process: RAW_ONESHOT,
        timeoutMs: run.timeoutMs,
        ...(run.signal ? { signal: run.signal } : {}),
      }),
    register(registry, loaded) {
      for (const tool of toolsOf(loaded, deps, options)) {
        try {
          registry.register(tool)
        } catch (error) {
          registry.reportLoadError({
            ...reportOf(loaded.spec.path, error),
            message: `${loaded.spec.path}: ${(error as Error).message}`,
          })
        }
      }
    },
  }
}

/**
 * The toolbox as a kernel plugin: provides the `tools` registry, filled with every tool of the
 * configured toolboxes (and the shared `help` tool), and the `binary-tools` loader.
 */
export const toolboxPlugin = definePlugin({
  name: 'toolbox',
  inject: { describe: DescribeToken, runtime: RuntimeToken, tasks: TasksToken },
  provides: [ToolsToken, BinaryToolsToken],
  config: ToolboxConfig,
  async apply(ctx, config) {
    const binary = createBinaryTools(ctx.deps, config)
    const registry = createToolRegistry()
    const { loaded, reports } = await binary.loadToolboxes(config.toolboxes)
    for (const report of reports) registry.reportLoadError(report)
    for (const tool of loaded) binary.register(registry, tool)
    const help = binary.helpTool(loaded)
    if (help) registry.register(help)
    ctx.provide(ToolsToken, registry)
    ctx.provide(BinaryToolsToken, binary)
  },
})
