import { definePlugin } from '@toolvisor/kernel'
import { LaunchersToken } from '@toolvisor/process-runtime'
import { z } from 'zod'
import { bwrapMechanism } from './mechanism.js'

/** The config of {@link bwrapPlugin}: which bwrap binary to run. */
export const BwrapPluginConfig = z
  .object({
    /** A path, or a name searched on the runtime's PATH (default `bwrap`). */
    bwrap: z.string().min(1).optional(),
  })
  .strict()
  .default({})

/**
 * Registers the `bwrap` sandbox mechanism into the `launchers` registry while the plugin is
 * active; unloading the plugin removes it.
 */
export const bwrapPlugin = definePlugin({
  name: 'sandbox-bwrap',
  inject: { launchers: LaunchersToken },
  config: BwrapPluginConfig,
  apply(ctx, config) {
    const mechanism = bwrapMechanism(config.bwrap === undefined ? {} : { bwrap: config.bwrap })
    ctx.onDispose(ctx.deps.launchers.registerSandbox(mechanism))
  },
})
