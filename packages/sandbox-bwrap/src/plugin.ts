import { definePlugin } from '@toolvisor/kernel'
import { sandboxMechanismToken } from '@toolvisor/launchers'
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

/** The token the `bwrap` mechanism is provided under. */
export const BwrapToken = sandboxMechanismToken('bwrap')

/**
 * Provides the `bwrap` sandbox mechanism (`sandboxMechanismToken('bwrap')`). It injects nothing:
 * the runtime plugin, when its `sandbox` option names `bwrap` (or `auto`), waits for it, in
 * whatever order the two are used.
 */
export const bwrapPlugin = definePlugin({
  name: 'sandbox-bwrap',
  provides: [BwrapToken],
  config: BwrapPluginConfig,
  apply(ctx, config) {
    ctx.provide(BwrapToken, bwrapMechanism(config.bwrap === undefined ? {} : { bwrap: config.bwrap }))
  },
})
