import type { CgroupHost } from '@toolvisor/containment'
import type { NetworkFacts } from '@toolvisor/launchers'
import type { RuntimeOptions } from '../options.js'
import type { EnvironmentPolicy } from './environment.js'
import type { AppliedLimits } from './limits.js'
import { cgroupFacts } from './runtime-cgroups.js'

/** How processes are started here, for operators. */
export interface LaunchFacts {
  /** The final-exec helper: where it is, or why it is missing and the fix. */
  readonly execHelper:
    | { readonly available: true; readonly path: string }
    | { readonly available: false; readonly path: string; readonly reason: string; readonly fix: string }
  /** Where launches are forked from: the fork server, or (and why) this process. */
  readonly forkServer:
    | { readonly available: true; readonly path: string }
    | { readonly available: false; readonly reason: string }
  /** Who sandboxed tools run as when toolvisor is root and they declare no run_as. */
  readonly sandboxUser: string
  /** Whether toolvisor runs as root (the sandbox user applies only then). */
  readonly root: boolean
  /** The global environment policy (tools: `core` when sandboxed, else `all`, unless set). */
  readonly environment: EnvironmentPolicy
  /** The state directory's size against its budget. */
  readonly state: { readonly path: string; readonly bytes: number; readonly budget: number }
  /** How each launch is contained: its cgroups, and the default limits with what enforces each. */
  readonly containment: ContainmentFacts
  /** The network by name (decision 0111): whether allow lists can be enforced, and the operator's bounds on tools. */
  readonly network: NetworkSetup
}

/** The network by name here (decision 0111), for `check --probe`. */
export interface NetworkSetup {
  /** The gates an allow list runs through: their helper, or why there are none (then allow lists do not load). */
  readonly gates: NetworkFacts
  /** toolvisor.json `network.allow`: the names a tool's list must fall within (absent: any). */
  readonly ceiling?: readonly string[]
  /** Whether a tool may declare `net: host`. */
  readonly host: boolean
  /** `none`: no tool gets any network. */
  readonly force?: 'none'
}

/** How launches are contained here (decision 0097), for `check --probe`. */
export interface ContainmentFacts {
  /** A cgroup per launch, or why none (then a tool's leftovers are found by its marker only). */
  readonly cgroup:
    | {
        readonly available: true
        /** The hierarchies, member first: version, toolvisor's subtree, the controllers used there. */
        readonly hierarchies: readonly {
          readonly version: 1 | 2
          readonly base: string
          readonly controllers: readonly string[]
        }[]
        /** How a tree is killed whole. */
        readonly kill: 'cgroup.kill' | 'freezer' | 'signals'
        /** What could not be had. */
        readonly gaps: readonly string[]
      }
    | { readonly available: false; readonly reason: string }
  /** The limits a launch gets by default, and what enforces each. */
  readonly limits: AppliedLimits
}

/** What `launchFacts().network` says of the runtime's `network` option. */
export function networkFacts(network: RuntimeOptions['network']): NetworkSetup {
  const gates: NetworkSetup['gates'] = network?.gates?.facts() ?? {
    available: false,
    reason: 'this runtime was composed without network gates (@toolvisor/network)',
    fix: "compose @toolvisor/network's networkPlugin and give the runtime network.gates",
  }
  return {
    gates,
    ...(network?.ceiling ? { ceiling: network.ceiling } : {}),
    host: network?.host ?? true,
    ...(network?.force ? { force: network.force } : {}),
  }
}

/** What `launchFacts()` says, from the runtime's options and what it found. */
export function launchFactsOf(
  options: RuntimeOptions & { readonly sandboxUser: string },
  found: Pick<LaunchFacts, 'execHelper' | 'forkServer' | 'state'>,
  { cgroups, limits }: { readonly cgroups: CgroupHost; readonly limits: AppliedLimits },
): LaunchFacts {
  return {
    ...found,
    sandboxUser: options.sandboxUser,
    root: process.geteuid?.() === 0,
    environment: options.environment ?? {},
    containment: { cgroup: cgroupFacts(cgroups), limits },
    network: networkFacts(options.network),
  }
}
