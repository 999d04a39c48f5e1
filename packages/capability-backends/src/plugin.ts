import { join } from 'node:path'
import { LoadingError } from '@toolvisor/describe-v2'
import { definePlugin, token } from '@toolvisor/kernel'
import { RuntimeToken } from '@toolvisor/process-runtime'
import { BinaryToolsToken, ToolsToken } from '@toolvisor/toolbox'
import { z } from 'zod'
import {
  type CapabilityReport,
  resolveCapability,
  serveCapability,
  unknownOverrides,
  whyNoBackend,
} from './capabilities.js'
import { CheckCache } from './check.js'
import { CapabilityErrorCodes, CapabilityWarningCodes } from './errors.js'

/** The `capabilities` service: what was resolved at load. */
export interface Capabilities {
  /** One report per configured capability, in configuration order. */
  reports(): readonly CapabilityReport[]
}

/** The `capabilities` token. */
export const CapabilitiesToken = token<Capabilities>('capabilities')

/** The plugin's configuration. */
export const CapabilitiesConfig = z
  .object({
    capabilities: z
      .array(
        z
          .object({
            capability: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/),
            backends: z.array(z.string().min(1)).min(1),
            required: z.boolean().default(true),
          })
          .strict(),
      )
      .default([]),
    /** Operator overrides: capability name → backend name to move first. */
    backends: z.record(z.string(), z.string().min(1)).default({}),
    /** How long a check result stays fresh. */
    ttlMs: z
      .number()
      .int()
      .nonnegative()
      .default(10 * 60 * 1000),
    /** Where check results are kept between runs (absent: in memory only). */
    cacheFile: z.string().min(1).optional(),
    /** Run every probe afresh. */
    probe: z.boolean().default(false),
    /** The bound on one probe. */
    checkTimeoutMs: z.number().int().positive().default(10_000),
  })
  .strict()

/** The file the CLI keeps check results in, under the runtime's state directory. */
export function cacheFileIn(stateDir: string): string {
  return join(stateDir, 'checks.json')
}

/**
 * Registers one tool per capability, served by its active backend. A required capability with no
 * usable backend fails the plugin (a LoadingError naming every candidate and why); an optional one
 * is left out with a warning in the tools' load report.
 */
export const capabilitiesPlugin = definePlugin({
  name: 'capability-backends',
  inject: { tools: ToolsToken, binary: BinaryToolsToken, runtime: RuntimeToken },
  provides: [CapabilitiesToken],
  config: CapabilitiesConfig,
  async apply(ctx, config) {
    const { tools, binary, runtime } = ctx.deps
    const cache = new CheckCache({
      ttlMs: config.ttlMs,
      ...(config.cacheFile ? { file: config.cacheFile } : {}),
    })
    const reports: CapabilityReport[] = []
    const warn = (message: string) =>
      tools.reportLoadError({
        severity: 'warning',
        tool: 'capabilities',
        code: CapabilityWarningCodes.WARNING,
        message,
      })
    for (const message of unknownOverrides(config.capabilities, config.backends)) warn(message)
    for (const capability of config.capabilities) {
      const override = config.backends[capability.capability]
      const resolved = await resolveCapability(capability, {
        binary,
        cache,
        probe: config.probe,
        timeoutMs: config.checkTimeoutMs,
        sandbox: runtime.options.sandbox,
        warn,
        ...(override !== undefined ? { override } : {}),
      })
      reports.push(resolved.report)
      if (resolved.tool) {
        ctx.onDispose(serveCapability(tools, capability.capability, resolved.tool))
        continue
      }
      const why = whyNoBackend(resolved.report)
      if (capability.required) {
        throw new LoadingError(CapabilityErrorCodes.NO_BACKEND, {
          tool: capability.capability,
          reason: `${why}; it is required`,
        })
      }
      warn(`${why}; it is optional and left out`)
    }
    ctx.provide(CapabilitiesToken, { reports: () => reports })
  },
})
