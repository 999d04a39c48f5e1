import type { NetworkRoute, Qualification, SandboxPolicy } from '@toolvisor/launchers'
import { isAllowList } from '@toolvisor/launchers'

/**
 * The Landlock ABI from which TCP bind and connect are handled: denied on every port (a second
 * wall under `net: none`), or allowed on given ports only (a network allow list).
 */
export const tcpRulesAbi = 4

/**
 * The TCP rules of `net`. `none`: no socket of any family is the filter's net: none variant (given
 * on --seccomp-fd); TCP denied on every port too where the ABI has TCP rules, as a second wall. An
 * allow list: the filter's stream variant leaves TCP only, and these rules leave connect to the
 * proxy's port and bind to the published ports (`refusal` turned an allow list away below ABI 4).
 */
export function netArgs(policy: SandboxPolicy, abi: number, network: NetworkRoute | undefined): string[] {
  if (policy.net === 'none') return abi >= tcpRulesAbi ? ['--deny-tcp'] : []
  if (!isAllowList(policy.net)) return []
  // Without its port the allow list would run with TCP open to every port: never.
  if (network?.kind !== 'port') {
    throw new Error(`launcherArgs: the network allow list of ${policy.executable} needs a port route`)
  }
  return [
    ...['--tcp-connect', String(network.port)],
    ...network.publish.flatMap((port) => ['--tcp-bind', String(port)]),
  ]
}

/** Why an allow list cannot be kept here (no TCP port rules below ABI 4), or undefined. */
export function netRefusal(
  policy: SandboxPolicy,
  abi: number,
  otherMechanism: string,
): Qualification | undefined {
  // An allow list is kept to the proxy's port by TCP port rules: without them TCP would be open.
  if (!isAllowList(policy.net) || abi >= tcpRulesAbi) return undefined
  return {
    ok: false,
    field: 'net',
    reason: `a network allow list needs Landlock's TCP port rules (ABI >= ${tcpRulesAbi}) to keep connections to the proxy's port; this kernel has ABI ${abi}`,
    fix: `${otherMechanism}, or declare net: host or none`,
  }
}
