import type { TreeUsage } from '@toolvisor/containment'
import type { Launch, NetworkGate } from '@toolvisor/launchers'
import { isAllowList, RuntimeError } from '@toolvisor/launchers'
import type { StartOptions } from '../types.js'
import type { ProcessHost } from './process-launch.js'

/** The most distinct refusals marked in a process's stderr. */
const MAX_NET_MARKERS = 20

type NetUsage = NonNullable<TreeUsage['network']>

/**
 * A process's gate to the network (decision 0111), seen from the process: each refused
 * connection marked in its stderr as it happens, once per name and reason (`[network: blocked
 * example.com:443, not in the allow list]`), so that every surface that shows stderr (results,
 * bash output, mail, the operator page) shows it; its accounts, live and once closed.
 */
export class ProcessNetwork {
  #gate: NetworkGate | undefined
  #last: NetUsage
  readonly #marked = new Set<string>()

  constructor(gate: NetworkGate, mark: (text: string) => void) {
    this.#gate = gate
    this.#last = usageOf(gate)
    gate.onDenied((denial) => {
      const key = `${denial.host}:${denial.port} ${denial.reason}`
      if (this.#gate === undefined || this.#marked.has(key)) return
      this.#marked.add(key)
      if (this.#marked.size <= MAX_NET_MARKERS) mark(`\n${denial.marker}\n`)
      else if (this.#marked.size === MAX_NET_MARKERS + 1)
        mark('\n[network: more connections blocked; processes status counts them]\n')
    })
  }

  /** Its accounts now, or as they were when the gate closed. */
  usage(): NetUsage {
    return this.#gate ? usageOf(this.#gate) : this.#last
  }

  /** Closes the gate (the tree's connections are gone by now), keeping its last accounts. Idempotent. */
  async close(): Promise<void> {
    const gate = this.#gate
    if (gate === undefined) return
    this.#last = usageOf(gate)
    this.#gate = undefined
    await gate.close().catch(() => {})
  }
}

/** The most names a process's account lists. */
const MAX_NAMES = 20

function usageOf(gate: NetworkGate): NetUsage {
  const { connections, bytesIn, bytesOut, denied, byName } = gate.report()
  const names = Object.entries(byName)
    .sort(([, a], [, b]) => b.bytesIn + b.bytesOut - (a.bytesIn + a.bytesOut))
    .slice(0, MAX_NAMES)
  return {
    connections,
    bytesIn,
    bytesOut,
    denied,
    ...(names.length > 0 ? { names: Object.fromEntries(names) } : {}),
  }
}

/**
 * The gate of a launch whose policy is an allow list (decision 0111), opened before anything is
 * spawned; a launch that cannot have one is not started (never one with the host's network).
 */
export async function gateOf(
  id: string,
  start: StartOptions,
  host: Pick<ProcessHost, 'options'>,
): Promise<NetworkGate | undefined> {
  const sandbox = start.tool.sandbox
  if (sandbox === undefined || !isAllowList(sandbox.policy.net)) return undefined
  const gates = host.options.network?.gates
  const route = sandbox.mechanism.netRoute
  if (gates === undefined || route === undefined) {
    const why =
      gates === undefined ? 'no network gates in this runtime' : `${sandbox.mechanism.name} cannot confine it`
    throw new RuntimeError(
      'RUNTIME_ERR_SPAWN_FAILED',
      `cannot enforce the network allow list: ${why}; nothing was started`,
    )
  }
  try {
    return await gates.open({
      id,
      list: sandbox.policy.net,
      route,
      ...(start.askNetwork ? { ask: start.askNetwork } : {}),
    })
  } catch (error) {
    throw new RuntimeError(
      'RUNTIME_ERR_SPAWN_FAILED',
      `cannot open the network gate: ${(error as Error).message}; nothing was started`,
    )
  }
}

/**
 * The launch `assemble` makes, held by the gate's network namespace when there is a gate (the
 * namespace holds the whole launch, wrappers and all: decision 0111); the gate is closed when
 * the launch cannot be made.
 */
export function assembleWithin(
  gate: NetworkGate | undefined,
  assemble: () => { readonly launch: Launch; readonly status?: number },
): { readonly launch: Launch; readonly status?: number } {
  try {
    const assembled = assemble()
    return gate ? { ...assembled, launch: gate.enclose(assembled.launch) } : assembled
  } catch (error) {
    void gate?.close()
    throw error
  }
}
