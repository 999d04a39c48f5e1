import { definePlugin } from '@toolvisor/kernel'
import { spawnerToken } from '@toolvisor/process-runtime'
import { z } from 'zod'
import { nativeSpawner } from './native-spawner.js'

/** The config of {@link launchNativePlugin}. */
export const LaunchNativeConfig = z
  .object({
    /** The fork server binary (default: the one this package built); `false`: none. */
    forkServer: z.union([z.string().min(1), z.literal(false)]).optional(),
  })
  .strict()
  .default({})

/** The token the native spawner is provided under: what the runtime plugin's `spawner: "native"` injects. */
export const NativeSpawnerToken = spawnerToken('native')

/**
 * Provides the native launch path (`spawnerToken('native')`, see `nativeSpawner`). It injects
 * nothing: the runtime plugin, when its `spawner` option is `native`, waits for it, in whatever
 * order the two are used.
 */
export const launchNativePlugin = definePlugin({
  name: 'launch-native',
  provides: [NativeSpawnerToken],
  config: LaunchNativeConfig,
  apply(ctx, config) {
    ctx.provide(
      NativeSpawnerToken,
      nativeSpawner(config.forkServer === undefined ? {} : { forkServer: config.forkServer }),
    )
  },
})
