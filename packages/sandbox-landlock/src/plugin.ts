import { definePlugin } from '@toolvisor/kernel'
import { LaunchersToken } from '@toolvisor/process-runtime'
import { z } from 'zod'
import { landlockMechanism } from './mechanism.js'

/** The config of {@link landlockPlugin} (optional: `kernel.use(landlockPlugin)` is enough). */
export const LandlockPluginConfig = z
  .object({
    /** The launcher to run instead of the one the package build compiled. */
    launcher: z.string().min(1).optional(),
  })
  .strict()
  .default({})

/**
 * Registers the `landlock` sandbox mechanism in the `launchers` registry, and removes it when the
 * plugin unloads.
 *
 * @example
 * ```ts
 * kernel.use(landlockPlugin) // or kernel.use(landlockPlugin, { launcher: '/opt/toolvisor/landlock-launcher' })
 * ```
 */
export const landlockPlugin = definePlugin({
  name: 'sandbox-landlock',
  inject: { launchers: LaunchersToken },
  config: LandlockPluginConfig,
  apply(ctx, config) {
    const mechanism = landlockMechanism(config.launcher === undefined ? {} : { launcher: config.launcher })
    ctx.onDispose(ctx.deps.launchers.registerSandbox(mechanism))
  },
})
