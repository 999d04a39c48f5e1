import { definePlugin } from '@toolvisor/kernel'
import { sandboxMechanismToken } from '@toolvisor/launchers'
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

/** The token the `landlock` mechanism is provided under. */
export const LandlockToken = sandboxMechanismToken('landlock')

/**
 * Provides the `landlock` sandbox mechanism (`sandboxMechanismToken('landlock')`); the runtime
 * plugin, when its `sandbox` option names `landlock` (or `auto`), waits for it.
 *
 * @example
 * ```ts
 * kernel.use(landlockPlugin) // or kernel.use(landlockPlugin, { launcher: '/opt/toolvisor/landlock-launcher' })
 * ```
 */
export const landlockPlugin = definePlugin({
  name: 'sandbox-landlock',
  provides: [LandlockToken],
  config: LandlockPluginConfig,
  apply(ctx, config) {
    const launcher = config.launcher === undefined ? {} : { launcher: config.launcher }
    ctx.provide(LandlockToken, landlockMechanism(launcher))
  },
})
