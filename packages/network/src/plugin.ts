import { definePlugin } from '@toolvisor/kernel'
import { NetworkGatesToken } from '@toolvisor/launchers'
import { z } from 'zod'
import { networkGates } from './gates.js'

/** The config of {@link networkPlugin}. */
export const NetworkConfig = z
  .object({
    /** Where each gate's unix socket is made (default: a private directory in the temporary directory). */
    socketDir: z.string().min(1).optional(),
    /** The namespace helper (default: the one this package built). */
    helper: z.string().min(1).optional(),
    /** Refuse every connection to a port this process listens on (toolvisor's own listener), whatever a list names. */
    refuseOwnListeners: z.boolean().optional(),
  })
  .strict()
  .default({})

/**
 * Provides the network gates (`NetworkGatesToken`, see {@link networkGates}); the runtime plugin,
 * with `network.gates` true, waits for it. Unloading it closes every gate and the proxy.
 */
export const networkPlugin = definePlugin({
  name: 'network',
  provides: [NetworkGatesToken],
  config: NetworkConfig,
  apply(ctx, config) {
    const gates = networkGates({
      ...(config.socketDir === undefined ? {} : { socketDir: config.socketDir }),
      ...(config.helper === undefined ? {} : { helper: config.helper }),
      ...(config.refuseOwnListeners === undefined
        ? {}
        : { proxy: { refuseOwnListeners: config.refuseOwnListeners } }),
    })
    ctx.provide(NetworkGatesToken, gates)
    ctx.onDispose(async () => {
      await gates[Symbol.asyncDispose]()
    })
  },
})
