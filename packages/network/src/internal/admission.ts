import type { Socket } from 'node:net'
import type { Answer } from './asking.js'
import { dial } from './dial.js'
import { canonicalHost, type Host, hostPort, shownHost } from './host.js'
import type { Ledger } from './ledger.js'
import { ownListener } from './own-listener.js'
import { isReserved } from './reserved.js'
import type { RuleSet } from './rule-set.js'

/**
 * Why a connection was refused, as each protocol says it: `policy` (the rules, the operator, the
 * limit: HTTP 403, SOCKS "not allowed by ruleset"), `unresolved` (HTTP 502, SOCKS "host
 * unreachable"), `refused` (HTTP 502, SOCKS "connection refused"), `timeout` (HTTP 504, SOCKS
 * "host unreachable").
 */
export type RefusalKind = 'policy' | 'unresolved' | 'refused' | 'timeout'

/** A connection refused, already recorded as a denial. */
export interface Refusal {
  readonly ok: false
  readonly kind: RefusalKind
  /** The host as the denial names it. */
  readonly host: string
  readonly port: number
  readonly reason: string
}

/**
 * A connection the gate's decision let through, not made yet: where it may go (the addresses in
 * the order they are tried, all within `timeoutMs`), counted under `key` once made. It holds one of
 * the gate's connection slots until `release`.
 */
export interface Clearance {
  readonly ok: true
  /** The host as asked for, in its one spelling (a name, or an address without brackets). */
  readonly host: string
  readonly port: number
  /** `host:port` as asked for. */
  readonly key: string
  readonly addresses: readonly string[]
  readonly timeoutMs: number
  /** Gives the slot back; once (later calls do nothing). */
  release(): void
}

/** A connection made: the socket to the target, counted in the ledger under `key`. */
export interface Passage {
  readonly ok: true
  readonly socket: Socket
  /** `host:port` as asked for. */
  readonly key: string
}

/** What an admission needs from its gate. */
export interface AdmissionOptions {
  readonly rules: RuleSet
  readonly ledger: Ledger
  readonly resolve: (host: string) => Promise<readonly string[]>
  /** The gate's `ask`, shared per host and port; absent: unlisted hosts are refused. */
  readonly ask?: (host: string, port: number) => Promise<Answer>
  readonly maxConnections: number
  readonly connectTimeoutMs: number
  /** Refuse a local destination on a port this process listens on (`ProxyOptions.refuseOwnListeners`). */
  readonly refuseOwnListeners: boolean
  /** Told of every socket to a target, so that closing the gate ends it. */
  readonly track: (socket: Socket) => void
}

/** The addresses a name may lead to, or the reason it may lead nowhere. */
type Destinations =
  | { readonly addresses: readonly string[] }
  | { readonly kind: RefusalKind; readonly reason: string }

/**
 * A gate's one decision, the same for every protocol: the rules (deny first), the limit, the
 * operator for unlisted hosts, resolution, the local and reserved ranges, then the connection.
 * Every refusal is recorded as a denial here and nowhere else.
 */
export class Admission {
  readonly #options: AdmissionOptions
  #inFlight = 0

  constructor(options: AdmissionOptions) {
    this.#options = options
  }

  /**
   * A connection to `requested` (host as the program gave it: a name, or an address without
   * brackets), or its refusal; undefined when `signal` aborted first (the client left, the gate
   * closed), which is no denial.
   */
  async admit(
    requested: { readonly host: string; readonly port: number },
    signal: AbortSignal,
  ): Promise<Passage | Refusal | undefined> {
    const cleared = await this.clear(requested, signal)
    if (!cleared?.ok) return cleared
    const passage = await this.#connect(cleared, signal)
    if (passage?.ok) passage.socket.once('close', cleared.release)
    else cleared.release()
    return passage
  }

  /**
   * The decision without the connection: where `requested` may go, or its refusal (recorded);
   * undefined when `signal` aborted first. Whoever makes the connection reports how it went
   * ({@link carried}, {@link failed}) and releases the slot.
   */
  async clear(
    requested: { readonly host: string; readonly port: number },
    signal: AbortSignal,
  ): Promise<Clearance | Refusal | undefined> {
    const { port } = requested
    const target = canonicalHost(requested.host)
    if (target === undefined || port < 1 || port > 65535) {
      return this.#refuse({ host: shownHost(requested.host), port }, 'policy', 'not in the allow list')
    }
    let verdict = this.#options.rules.verdict(target, port)
    if (verdict.kind === 'deny')
      return this.#refuse({ host: target.host, port }, 'policy', 'in the deny list')
    if (verdict.kind === 'unlisted' && this.#options.ask === undefined) {
      return this.#refuse({ host: target.host, port }, 'policy', 'not in the allow list')
    }
    if (this.#inFlight >= this.#options.maxConnections) {
      return this.#refuse(
        { host: target.host, port },
        'policy',
        `too many connections (${this.#options.maxConnections})`,
      )
    }
    this.#inFlight++
    let cleared: Clearance | undefined
    try {
      if (verdict.kind === 'unlisted') {
        const answer = await this.#answer(target, port, signal)
        if (answer === undefined) return undefined
        if (answer === 'deny')
          return this.#refuse({ host: target.host, port }, 'policy', 'refused by the operator')
        if (answer === 'session') this.#options.rules.approve(target, port)
        verdict = { kind: 'allow', named: true }
      }
      const destinations = await this.#destinations(target, port, verdict.named)
      if (signal.aborted) return undefined
      if ('reason' in destinations)
        return this.#refuse({ host: target.host, port }, destinations.kind, destinations.reason)
      // toolvisor's own listener is never a destination, whatever a list names (decision 0111).
      const local = destinations.addresses.some((address) => isReserved(address))
      if (this.#options.refuseOwnListeners && local && ownListener(port))
        return this.#refuse({ host: target.host, port }, 'policy', "toolvisor's own listener")
      let held = true
      cleared = {
        ok: true,
        host: target.host,
        port,
        key: hostPort(target.host, port),
        addresses: destinations.addresses,
        timeoutMs: this.#options.connectTimeoutMs,
        release: () => {
          if (held) this.#inFlight--
          held = false
        },
      }
      return cleared
    } finally {
      if (cleared === undefined) this.#inFlight--
    }
  }

  /**
   * A cleared connection that was made elsewhere (by the bridge of `toolvisor-netns --handoff`):
   * counted now; the returned function sets its bytes so far, as the bridge tells them.
   */
  carried(cleared: Clearance): (bytesIn: number, bytesOut: number) => void {
    return this.#options.ledger.carried(cleared.key)
  }

  /** A cleared connection that could not be made elsewhere: recorded as dialing's would be. */
  failed(cleared: Clearance, why: 'refused' | 'timeout'): Refusal {
    return why === 'timeout'
      ? this.#refuse({ host: cleared.host, port: cleared.port }, 'timeout', 'timed out connecting')
      : this.#refuse(
          { host: cleared.host, port: cleared.port },
          'refused',
          'connection refused by the target',
        )
  }

  #answer(target: Host, port: number, signal: AbortSignal): Promise<Answer | undefined> {
    const asked = this.#options.ask!(target.host, port)
    return new Promise((resolve) => {
      const abort = () => resolve(undefined)
      signal.addEventListener('abort', abort, { once: true })
      void asked.then((answer) => {
        signal.removeEventListener('abort', abort)
        resolve(signal.aborted ? undefined : answer)
      })
    })
  }

  /**
   * The addresses `target` may lead to: an address is itself; a name is resolved, and then an
   * address a deny entry names is dropped, and so is a local or reserved one unless the entry that
   * allowed the name named it exactly (`named`).
   */
  async #destinations(target: Host, port: number, named: boolean): Promise<Destinations> {
    if (target.kind === 'address') return { addresses: [target.host] }
    let resolved: readonly string[]
    try {
      resolved = await this.#options.resolve(target.host)
    } catch {
      resolved = []
    }
    const addresses: string[] = []
    let denied = false
    let reserved: string | undefined
    for (const text of resolved) {
      const address = canonicalHost(text)
      if (address?.kind !== 'address') continue
      if (this.#options.rules.deniesAddress(address.host, port)) denied = true
      else if (!named && isReserved(address.host)) reserved ??= address.host
      else addresses.push(address.host)
    }
    if (addresses.length > 0) return { addresses }
    if (denied) return { kind: 'policy', reason: 'in the deny list' }
    if (reserved !== undefined) return { kind: 'policy', reason: `a local or reserved address (${reserved})` }
    return { kind: 'unresolved', reason: 'the name does not resolve' }
  }

  async #connect(cleared: Clearance, signal: AbortSignal): Promise<Passage | Refusal | undefined> {
    const dialed = await dial(cleared.addresses, cleared.port, {
      timeoutMs: cleared.timeoutMs,
      signal,
      track: this.#options.track,
    })
    if (dialed.ok) {
      this.#options.ledger.connected(cleared.key, dialed.socket)
      return { ok: true, socket: dialed.socket, key: cleared.key }
    }
    if (dialed.why === 'aborted') return undefined
    return this.failed(cleared, dialed.why)
  }

  #refuse(
    where: { readonly host: string; readonly port: number },
    kind: RefusalKind,
    reason: string,
  ): Refusal {
    this.#options.ledger.denied({ host: where.host, port: where.port, reason, at: Date.now() })
    return { ok: false, kind, host: where.host, port: where.port, reason }
  }
}
