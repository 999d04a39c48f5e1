import { lookup } from 'node:dns/promises'
import { NetworkError } from './errors.js'
import { ListeningGate } from './internal/gate.js'
import { hostPort } from './internal/host.js'
import type { NetRules } from './rules.js'

export type { NetEntry, NetRules } from './rules.js'
export { parseNetEntry } from './rules.js'

/** Options of {@link createProxy}. */
export interface ProxyOptions {
  /**
   * A test seam only, never a production setting: names are resolved by this function (a fixed
   * map, so that tests need no DNS) instead of the system's resolver (`node:dns` `lookup` with
   * `all: true`). It returns the addresses of `host`, or rejects (or returns none) when the name
   * does not resolve.
   */
  readonly resolve?: (host: string) => Promise<readonly string[]>
  /**
   * Connections each gate carries at once: tunnels, plain HTTP requests in flight, and those
   * waiting for the operator, a name's resolution or the target. One more is refused with
   * `too many connections (64)`. A gate also closes at once, without an answer, every client
   * connection to it beyond twice this many. Default 64.
   */
  readonly maxConnections?: number
  /** How long the proxy tries to connect to a target (all its addresses together). Default 10 000 ms. */
  readonly connectTimeoutMs?: number
  /**
   * Refuse a local destination that is a TCP port this very process listens on (toolvisor's own
   * listener: `serve`'s endpoint, the operator page), whatever a list names: reason `toolvisor's
   * own listener`. The CLI turns it on; a host whose process serves what its tools may reach
   * leaves it off (the default).
   */
  readonly refuseOwnListeners?: boolean
}

/** The proxy toolvisor runs outside the sandbox: a gate per launch, each deciding by name. */
export interface NetProxy {
  /** Opens a gate for one launch: its own listener, its rules, its accounts. */
  open(request: GateRequest): Promise<Gate>
  /** Closes every gate and every connection; `open` rejects afterwards. Idempotent. */
  close(): Promise<void>
}

/** What a gate is opened for. */
export interface GateRequest {
  /** The launch's id, for messages. */
  readonly id: string
  /** What the gate lets through. */
  readonly rules: NetRules
  /**
   * Where the gate listens: `unix`, on this socket path (mode 0600, removed at close; put it in a
   * directory only toolvisor's user may enter); `tcp`, on 127.0.0.1 at a port the system picks.
   */
  readonly listen: { readonly unix: string } | { readonly tcp: true }
  /**
   * Asked for a host and port the rules neither allow nor deny (the bash tools: an elicitation).
   * `once` lets this connection through, `session` adds the host and port to this gate's allow
   * list, `deny` refuses (`refused by the operator`, as does an answer that rejects). An approval
   * names the host exactly, so it may lead to a local address (the operator saw the name, not
   * where it resolves). Connections to the same host and port while an answer is pending share
   * it. Absent: refused.
   */
  readonly ask?: (host: string, port: number) => Promise<'once' | 'session' | 'deny'>
}

/** One launch's gate: a listener that speaks HTTP CONNECT, plain HTTP and SOCKS5 on the same socket. */
export interface Gate {
  /** The socket path, for a gate opened with `listen: { unix }`. */
  readonly unixPath?: string
  /** The port on 127.0.0.1, for a gate opened with `listen: { tcp: true }`. */
  readonly tcpPort?: number
  /** What happened so far: counters, and the first 20 denials with their total count. */
  report(): GateReport
  /**
   * Calls `listener` at each denial (for live surfaces); returns the unsubscribe. What a listener
   * throws is ignored: the gate and the other listeners go on.
   */
  onDenied(listener: (denial: Denial) => void): () => void
  /** Stops listening, ends its connections, removes the socket file. Idempotent. */
  close(): Promise<void>
}

/** A connection the gate refused, or could not make. */
export interface Denial {
  /** The host as asked for (a name, or an address without brackets). */
  readonly host: string
  readonly port: number
  /**
   * Why: `not in the allow list`, `in the deny list`, `a local or reserved address (10.0.0.5)`,
   * `the name does not resolve`, `too many connections (64)`, `refused by the operator`,
   * `connection refused by the target`, `timed out connecting`.
   */
  readonly reason: string
  /** When, in milliseconds since the epoch. */
  readonly at: number
}

/** Traffic through one name, `host:port`. */
export interface NameReport {
  /** Connections made to it. */
  readonly connections: number
  /** Bytes from it to the launch. */
  readonly bytesIn: number
  /** Bytes from the launch to it. */
  readonly bytesOut: number
}

/** A gate's accounts. Bytes are counted on the proxy's connections to the targets, headers included. */
export interface GateReport {
  /** Connections made through the gate (a tunnel, or one plain HTTP request), in total. */
  readonly connections: number
  /** Bytes from the outside to the launch. */
  readonly bytesIn: number
  /** Bytes from the launch to the outside. */
  readonly bytesOut: number
  /** The same per `host:port` (`example.com:443`, `[::1]:8080`). */
  readonly byName: Readonly<Record<string, NameReport>>
  /** The first 20 denials, oldest first. */
  readonly denied: readonly Denial[]
  /** Every denial, counted. */
  readonly deniedCount: number
}

/**
 * The marker that tells the model a connection was refused, as every surface shows it.
 *
 * @example
 * ```ts
 * denialMarker({ host: 'example.com', port: 443, reason: 'not in the allow list', at: 0 })
 * // '[network: blocked example.com:443, not in the allow list]'
 * ```
 */
export function denialMarker(denial: Denial): string {
  return `[network: blocked ${hostPort(denial.host, denial.port)}, ${denial.reason}]`
}

const DEFAULT_MAX_CONNECTIONS = 64
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000

async function systemResolve(host: string): Promise<readonly string[]> {
  const found = await lookup(host, { all: true })
  return found.map((entry) => entry.address)
}

function positiveInteger(field: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new NetworkError(
      'NET_ERR_OPTIONS',
      `createProxy: options.${field} is ${value}; pass a positive integer`,
    )
  }
  return value
}

/**
 * The allow-listing proxy (issue 32). A launch gets no route to anything but its gate; the gate
 * decides by name. Nothing listens until a gate is opened.
 *
 * @example
 * ```ts
 * const proxy = createProxy()
 * const gate = await proxy.open({ id: 'launch-1', rules: { allow: ['registry.npmjs.org'], deny: [] }, listen: { tcp: true } })
 * // the launch gets HTTPS_PROXY=http://127.0.0.1:${gate.tcpPort}, ALL_PROXY=socks5h://127.0.0.1:${gate.tcpPort}
 * gate.onDenied((denial) => console.log(denialMarker(denial)))
 * await proxy.close()
 * ```
 */
export function createProxy(options: ProxyOptions = {}): NetProxy {
  const settings = {
    resolve: options.resolve ?? systemResolve,
    maxConnections: positiveInteger('maxConnections', options.maxConnections, DEFAULT_MAX_CONNECTIONS),
    connectTimeoutMs: positiveInteger(
      'connectTimeoutMs',
      options.connectTimeoutMs,
      DEFAULT_CONNECT_TIMEOUT_MS,
    ),
    refuseOwnListeners: options.refuseOwnListeners === true,
  }
  const gates = new Set<Gate>()
  let closing: Promise<void> | undefined
  return {
    async open(request) {
      if (closing !== undefined) {
        throw new NetworkError(
          'NET_ERR_CLOSED',
          `gate ${request.id}: the proxy is closed; open gates on a new one`,
        )
      }
      const gate: Gate = await ListeningGate.open(request, settings, () => gates.delete(gate))
      if (closing !== undefined) {
        await gate.close()
        throw new NetworkError('NET_ERR_CLOSED', `gate ${request.id}: the proxy closed while it opened`)
      }
      gates.add(gate)
      return gate
    },
    close() {
      closing ??= Promise.all([...gates].map((gate) => gate.close())).then(() => {})
      return closing
    },
  }
}
