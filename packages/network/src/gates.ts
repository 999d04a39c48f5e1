import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type {
  GateOpening,
  Launch,
  NetAllowList,
  NetDenial,
  NetworkFacts,
  NetworkGate,
  NetworkGates,
  NetworkRoute,
} from '@toolvisor/launchers'
import { inNetworkNamespace, NAMESPACE_PROXY_PORT, netnsHelperStatus } from './netns.js'
import {
  createProxy,
  type Denial,
  denialMarker,
  type Gate,
  type NetProxy,
  type ProxyOptions,
  parseNetEntry,
} from './proxy.js'

/** Options of {@link networkGates}. */
export interface NetworkGatesOptions {
  /**
   * Where each gate's unix socket is made (a directory only toolvisor's user may enter, created
   * if missing). Default: a private directory in the system's temporary directory. A path too
   * long for a socket address (108 bytes) falls back to that too.
   */
  readonly socketDir?: string
  /** The proxy's options (its `resolve` is a test seam only). */
  readonly proxy?: ProxyOptions
  /** The namespace helper (default: the one this package built). */
  readonly helper?: string
}

/** A socket path must fit `sockaddr_un.sun_path` (108 bytes with its NUL). */
const SOCKET_PATH_MAX = 107
/** `<dir>/<16 hex>.sock`. */
const SOCKET_NAME_LENGTH = 22

/**
 * The network gates (issue 32, decision 0111): one proxy for the runtime, a gate per launch with
 * an allow list, each on a listener of its own so that the proxy knows whose connection it is.
 * A `namespace` route (bwrap) gets a unix socket and the launch runs inside `toolvisor-netns`; a
 * `port` route gets a port on the host's loopback.
 *
 * @example
 * ```ts
 * const gates = networkGates({ socketDir: '/var/lib/toolvisor/net' })
 * const runtime = createRuntime({ stateDir, sandbox: 'bwrap', network: { gates } }, launchers)
 * ```
 */
export function networkGates(options: NetworkGatesOptions = {}): NetworkGates & AsyncDisposable {
  return new Gates(options)
}

class Gates implements NetworkGates, AsyncDisposable {
  readonly #options: NetworkGatesOptions
  #proxy: NetProxy | undefined
  #dir: { readonly path: string; readonly own: boolean } | undefined
  readonly #open = new Set<NetworkGate>()

  constructor(options: NetworkGatesOptions) {
    this.#options = options
  }

  facts(): NetworkFacts {
    const helper = netnsHelperStatus(this.#options.helper)
    if (!helper.available) return { available: false, reason: helper.reason, fix: helper.fix }
    return { available: true, namespaceHelper: helper.path }
  }

  check(list: NetAllowList, ceiling?: readonly string[]): { field: string; reason: string } | undefined {
    for (const key of ['allow', 'deny'] as const) {
      for (const [i, text] of list[key].entries()) {
        const entry = parseNetEntry(text)
        if (typeof entry === 'string') return { field: `${key}[${i}]`, reason: entry }
      }
    }
    if (ceiling === undefined) return undefined
    for (const [i, text] of list.allow.entries()) {
      if (!ceiling.some((bound) => covers(bound, text))) {
        return {
          field: `allow[${i}]`,
          reason: `"${text}" is not within the operator's network allow list (toolvisor.json network.allow: ${JSON.stringify(ceiling)})`,
        }
      }
    }
    return undefined
  }

  async open(opening: GateOpening): Promise<NetworkGate> {
    this.#proxy ??= createProxy(this.#options.proxy)
    const proxy = this.#proxy
    const rules = { allow: opening.list.allow, deny: opening.list.deny }
    const ask = opening.ask === undefined ? {} : { ask: opening.ask }
    let gate: NetworkGate
    if (opening.route === 'namespace') {
      const helper = netnsHelperStatus(this.#options.helper)
      if (!helper.available) throw new Error(`${helper.reason} (fix: ${helper.fix})`)
      const path = join(this.#socketDir(), `${randomBytes(8).toString('hex')}.sock`)
      const opened = await proxy.open({ id: opening.id, rules, listen: { unix: path }, ...ask })
      const route: NetworkRoute = {
        kind: 'namespace',
        port: NAMESPACE_PROXY_PORT,
        publish: opening.list.publish,
      }
      const enclose = (launch: Launch) =>
        inNetworkNamespace(launch, {
          proxy: path,
          helper: helper.path,
          publish: opening.list.publish.map((port) => ({ host: port, inner: port })),
          handoff: true,
        })
      gate = new OpenGate(opened, route, enclose, () => this.#open.delete(gate))
    } else {
      const opened = await proxy.open({ id: opening.id, rules, listen: { tcp: true }, ...ask })
      const route: NetworkRoute = {
        kind: 'port',
        port: opened.tcpPort as number,
        publish: opening.list.publish,
      }
      gate = new OpenGate(
        opened,
        route,
        (launch) => launch,
        () => this.#open.delete(gate),
      )
    }
    this.#open.add(gate)
    return gate
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await Promise.all([...this.#open].map((gate) => gate.close()))
    await this.#proxy?.close()
    this.#proxy = undefined
    if (this.#dir?.own) rmSync(this.#dir.path, { recursive: true, force: true })
    this.#dir = undefined
  }

  /** The directory gates' sockets go in, made once (mode 0700). */
  #socketDir(): string {
    if (this.#dir !== undefined) return this.#dir.path
    const asked = this.#options.socketDir
    if (asked !== undefined && asked.length + 1 + SOCKET_NAME_LENGTH <= SOCKET_PATH_MAX) {
      mkdirSync(asked, { recursive: true, mode: 0o700 })
      this.#dir = { path: asked, own: false }
    } else {
      this.#dir = { path: mkdtempSync(join(tmpdir(), 'toolvisor-net-')), own: true }
    }
    return this.#dir.path
  }
}

/** A launch's gate as the runtime sees it (`NetworkGate`), over the proxy's own. */
class OpenGate implements NetworkGate {
  readonly route: NetworkRoute
  readonly env: Readonly<Record<string, string>>
  readonly enclose: (launch: Launch) => Launch
  readonly #gate: Gate
  readonly #closed: () => void

  constructor(gate: Gate, route: NetworkRoute, enclose: (launch: Launch) => Launch, closed: () => void) {
    this.#gate = gate
    this.route = route
    this.enclose = enclose
    this.#closed = closed
    this.env = proxyEnvironment(route.port)
  }

  onDenied(listener: (denial: NetDenial) => void): () => void {
    const told = (denial: Denial) =>
      listener({ host: denial.host, port: denial.port, reason: denial.reason, marker: denialMarker(denial) })
    // Those refused before it subscribed first: a launch may connect before its process is wired.
    for (const denial of this.#gate.report().denied) told(denial)
    return this.#gate.onDenied(told)
  }

  report() {
    const { connections, bytesIn, bytesOut, byName, deniedCount } = this.#gate.report()
    return { connections, bytesIn, bytesOut, byName, denied: deniedCount }
  }

  async close(): Promise<void> {
    this.#closed()
    await this.#gate.close()
  }
}

/**
 * What a launch behind a gate is told: every proxy variable, both cases (curl reads the lower
 * case ones, most others either). Its own loopback stays direct: inside a namespace it is the
 * sandbox's own; under a port route the mechanism lets nothing but the proxy's port through.
 */
export function proxyEnvironment(port: number): Record<string, string> {
  const http = `http://127.0.0.1:${port}`
  const socks = `socks5h://127.0.0.1:${port}`
  const noProxy = 'localhost,127.0.0.1,::1'
  return {
    HTTP_PROXY: http,
    HTTPS_PROXY: http,
    ALL_PROXY: socks,
    NO_PROXY: noProxy,
    http_proxy: http,
    https_proxy: http,
    all_proxy: socks,
    no_proxy: noProxy,
  }
}

/**
 * Whether the operator's entry `bound` allows everything the tool's entry `entry` names: the same
 * host or address (for a `*.domain` bound, any name below the domain, or a wildcard of it or below
 * it), and the same port when the bound names one.
 */
export function covers(bound: string, entry: string): boolean {
  const b = parseNetEntry(bound)
  const e = parseNetEntry(entry)
  if (typeof b === 'string' || typeof e === 'string') return false
  if (b.port !== undefined && b.port !== e.port) return false
  if (b.kind !== 'subdomains') return e.kind === b.kind && e.host === b.host
  if (e.kind === 'address') return false
  return e.host.endsWith(`.${b.host}`) || (e.kind === 'subdomains' && e.host === b.host)
}
