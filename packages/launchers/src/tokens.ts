import { type Token, token } from '@toolvisor/kernel'
import type { Launchers, SandboxMechanism } from './launchers.js'
import type { NetworkGates } from './network.js'

/** The `launchers` token: the registry of sandbox and run_as mechanisms. */
export const LaunchersToken = token<Launchers>('launchers')

/**
 * The token a sandbox mechanism's plugin provides its mechanism under (`sandbox-mechanism:bwrap`).
 * The runtime plugin injects the one its `sandbox` option names (both of `auto`'s), so it waits
 * for them, whatever order the plugins are used in.
 */
export function sandboxMechanismToken(name: string): Token<SandboxMechanism> {
  return token<SandboxMechanism>(`sandbox-mechanism:${name}`)
}

/**
 * The token `@toolvisor/network`'s plugin provides its `NetworkGates` under. The runtime plugin
 * injects it when its `network.gates` option is true, so that no tool with an allow list is
 * prepared before the gates exist.
 */
export const NetworkGatesToken = token<NetworkGates>('network-gates')
