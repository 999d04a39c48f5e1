import { type Token, token } from '@toolvisor/kernel'
import type { Launchers, SandboxMechanism } from './launchers.js'
import type { Spawner } from './spawner.js'
import type { ProcessRuntime } from './types.js'

/** The `launchers` token: the registry of sandbox and run_as mechanisms. */
export const LaunchersToken = token<Launchers>('launchers')

/** The `runtime` token: launches and tracks tool processes. */
export const RuntimeToken = token<ProcessRuntime>('runtime')

/**
 * The token a sandbox mechanism's plugin provides its mechanism under (`sandbox-mechanism:bwrap`).
 * The runtime plugin injects the one its `sandbox` option names (both of `auto`'s), so it waits
 * for them, whatever order the plugins are used in.
 */
export function sandboxMechanismToken(name: string): Token<SandboxMechanism> {
  return token<SandboxMechanism>(`sandbox-mechanism:${name}`)
}

/**
 * The token a spawner's plugin provides its `Spawner` under (`spawner:native`, by
 * `@toolvisor/launch-native`). The runtime plugin injects the one its `spawner` option names, so
 * no launch is spawned before it exists, whatever order the plugins are used in.
 */
export function spawnerToken(name: string): Token<Spawner> {
  return token<Spawner>(`spawner:${name}`)
}
