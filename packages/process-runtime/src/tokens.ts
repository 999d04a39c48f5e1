import { type Token, token } from '@toolvisor/kernel'
import type { Keeping, Spawner } from './spawner.js'
import type { ProcessRuntime } from './types.js'

/** The `runtime` token: launches and tracks tool processes. */
export const RuntimeToken = token<ProcessRuntime>('runtime')

/**
 * The token a spawner's plugin provides its `Spawner` under (`spawner:native`, by
 * `@toolvisor/launch-native`). The runtime plugin injects the one its `spawner` option names, so
 * no launch is spawned before it exists, whatever order the plugins are used in.
 */
export function spawnerToken(name: string): Token<Spawner> {
  return token<Spawner>(`spawner:${name}`)
}

/**
 * The `keeping` token: what keeps a process past the runtime (decision 0113), provided by
 * `@toolvisor/keeper`'s plugin; the runtime plugin injects it when its `keep` option is true.
 */
export const KeepingToken = token<Keeping>('keeping')
