/** What a sandbox policy says of the network (issue 32, decision 0111), and where a launch reaches its proxy. */

/**
 * Where a launch's proxy is (`Launch.network`). `namespace`: the runtime starts the whole launch
 * (outermost, before any wrapper) in a fresh network namespace holding only `lo`, where `port` on
 * 127.0.0.1 is bridged to the proxy: a mechanism must not unshare the network again. `port`: the
 * proxy listens on the host's 127.0.0.1 at `port`, and the mechanism lets the launch connect to
 * that port only (Landlock's TCP rules).
 */
export interface NetworkRoute {
  readonly kind: 'namespace' | 'port'
  /** The proxy's port, as the launched process reaches it (127.0.0.1). */
  readonly port: number
  /** Ports a server inside may listen on, reachable from the host's loopback. */
  readonly publish: readonly number[]
}

/**
 * A network allow list (`runtime.sandbox.net` as an object, issue 32): names (`registry.npmjs.org`,
 * `*.github.com`), addresses and ports the launch may reach through toolvisor's proxy, names it
 * may never reach, and ports it publishes to the host's loopback.
 */
export interface NetAllowList {
  readonly allow: readonly string[]
  readonly deny: readonly string[]
  readonly publish: readonly number[]
}

/** `SandboxPolicy.net`: the host's network, none at all, or an allow list through the proxy. */
export type NetPolicy = 'host' | 'none' | NetAllowList

/** True when `net` is an allow list (not `host` nor `none`). */
export function isAllowList(net: NetPolicy): net is NetAllowList {
  return typeof net === 'object'
}
