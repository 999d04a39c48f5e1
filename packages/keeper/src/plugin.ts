import { definePlugin } from '@toolvisor/kernel'
import { KeepingToken } from '@toolvisor/process-runtime'
import { keepRoot } from '@toolvisor/run-state'
import { z } from 'zod'
import { Keepers } from './keeper.js'

/** The config of {@link keeperPlugin}. */
export const KeeperConfig = z
  .object({
    /** The runtime's state directory: the keepers live in its `keep/`. */
    stateDir: z.string().min(1),
    /** How long a keeper with no daemon lives before it kills its process and goes (ms; default 24 h). */
    reapAfterMs: z.number().int().positive().optional(),
    /**
     * Bytes each stream's file may hold (default 256 MiB, the runtime's own spill cap): past it a
     * kept process's output is dropped, counted, and said at the end of its stderr, never written
     * without bound.
     */
    capBytes: z
      .number()
      .int()
      .positive()
      .default(256 * 1024 * 1024),
    /** The keeper binary (default: the one this package built). */
    binary: z.string().min(1).optional(),
  })
  .strict()

/**
 * Provides `keeping` (`KeepingToken`): the keepers of the state directory, what the runtime
 * plugin's `keep: true` injects (decision 0113). Refuses to start when the keeper binary is
 * missing (it says why): an operator who asked for kept processes never gets unkept ones silently.
 */
export const keeperPlugin = definePlugin({
  name: 'keeper',
  provides: [KeepingToken],
  config: KeeperConfig,
  apply(ctx, config) {
    const { stateDir, reapAfterMs, capBytes, binary } = config
    const options = {
      root: keepRoot(stateDir),
      ...(reapAfterMs !== undefined ? { reapAfterMs } : {}),
      ...(capBytes !== undefined ? { capBytes } : {}),
      ...(binary !== undefined ? { binary } : {}),
    }
    ctx.provide(KeepingToken, new Keepers(options))
  },
})
