import type { Launch } from './launchers.js'
import type { NetAllowList, NetworkRoute } from './net-policy.js'

/**
 * The network gates seam (issue 32): how the runtime gets a proxy for a launch whose policy is a
 * network allow list. `@toolvisor/network` provides one (`networkGates()`); a host hands it to the
 * runtime as its `network` option. Without one, a tool that declares an allow list does not load.
 */
export interface NetworkGates {
  /** Whether allow lists can be enforced here, and if not why and how to fix it. */
  facts(): NetworkFacts
  /**
   * Checks an allow list at load, entry by entry, against the operator's `ceiling` (absent: none):
   * the first entry refused, by its place (`allow[2]`, `publish[0]`), and why; undefined when all
   * are valid.
   */
  check(
    list: NetAllowList,
    ceiling?: readonly string[],
  ): { readonly field: string; readonly reason: string } | undefined
  /** Opens the gate of one launch: its own listener, its rules, its accounts. */
  open(opening: GateOpening): Promise<NetworkGate>
}

/** What `NetworkGates.facts` says. */
export type NetworkFacts =
  | { readonly available: true; readonly namespaceHelper?: string }
  | { readonly available: false; readonly reason: string; readonly fix: string }

/** What a gate is opened for. */
export interface GateOpening {
  /** The launch's id, for messages. */
  readonly id: string
  readonly list: NetAllowList
  /** How the launch's mechanism confines it (`SandboxMechanism.netRoute`). */
  readonly route: NetworkRoute['kind']
  /**
   * Asked for a name the list neither allows nor denies (the bash tools: an elicitation): `once`
   * lets this connection through, `session` adds the name to this gate's list, `deny` refuses.
   * Absent: refused.
   */
  readonly ask?: (host: string, port: number) => Promise<'once' | 'session' | 'deny'>
}

/** One launch's gate to the network. */
export interface NetworkGate {
  /** Where the launch reaches the proxy. */
  readonly route: NetworkRoute
  /** The variables the launched process gets (`HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY`, `NO_PROXY`, each in lower case too). */
  readonly env: Readonly<Record<string, string>>
  /**
   * The launch as it must start, after every other wrapper: for a `namespace` route, inside a
   * fresh network namespace bridged to the proxy; for a `port` route, unchanged.
   */
  enclose(launch: Launch): Launch
  /**
   * Called at each refused connection, and at once for those refused before it subscribed (the
   * first 20 a gate keeps: a launch may connect before the runtime wired its process); returns the
   * unsubscribe.
   */
  onDenied(listener: (denial: NetDenial) => void): () => void
  /** Its accounts so far. */
  report(): NetReport
  /** Stops its listener and ends its connections. Idempotent. */
  close(): Promise<void>
}

/** A refused connection. */
export interface NetDenial {
  readonly host: string
  readonly port: number
  /** `not in the allow list`, `in the deny list`, `a local or reserved address (10.0.0.5)`, ... */
  readonly reason: string
  /** `[network: blocked example.com:443, not in the allow list]` */
  readonly marker: string
}

/** A gate's accounts: connections made, bytes each way, per name, and refusals. */
export interface NetReport {
  readonly connections: number
  /** From the network to the launch. */
  readonly bytesIn: number
  /** From the launch to the network. */
  readonly bytesOut: number
  /** Per `host:port`. */
  readonly byName: Readonly<
    Record<string, { readonly connections: number; readonly bytesIn: number; readonly bytesOut: number }>
  >
  readonly denied: number
}
