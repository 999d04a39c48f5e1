import type { Socket } from 'node:net'
import type { Denial, GateReport } from '../proxy.js'

/** The denials a report lists; the rest are only counted. */
const DENIALS_KEPT = 20

interface Counts {
  connections: number
  bytesIn: number
  bytesOut: number
}

/**
 * A gate's accounts. Bytes are read off the proxy's sockets to the targets (`bytesRead`,
 * `bytesWritten`) rather than counted per chunk: exact, free on the hot path, and live, since a
 * report adds the sockets still open to the totals of those closed. A tunnel the bridge carries
 * (`carried`) adds its bytes as the bridge counted them, when it ends.
 */
export class Ledger {
  readonly #closed: Counts = { connections: 0, bytesIn: 0, bytesOut: 0 }
  readonly #byName = new Map<string, Counts>()
  readonly #open = new Map<Socket, string>()
  readonly #denied: Denial[] = []
  #deniedCount = 0
  readonly #listeners = new Set<(denial: Denial) => void>()

  /** A connection made to `key` (`host:port`) on `socket`, counted until it closes. */
  connected(key: string, socket: Socket): void {
    this.#closed.connections++
    this.#counts(key).connections++
    this.#open.set(socket, key)
    socket.once('close', () => {
      this.#open.delete(socket)
      for (const counts of [this.#closed, this.#counts(key)]) {
        counts.bytesIn += socket.bytesRead
        counts.bytesOut += socket.bytesWritten
      }
    })
  }

  /**
   * A connection made to `key` whose bytes another process carries (the bridge's handoff): counted
   * now; the returned function sets its bytes so far, as the carrier tells them (a report shows
   * the last told).
   */
  carried(key: string): (bytesIn: number, bytesOut: number) => void {
    this.#closed.connections++
    this.#counts(key).connections++
    const told = { bytesIn: 0, bytesOut: 0 }
    return (bytesIn, bytesOut) => {
      for (const counts of [this.#closed, this.#counts(key)]) {
        counts.bytesIn += bytesIn - told.bytesIn
        counts.bytesOut += bytesOut - told.bytesOut
      }
      told.bytesIn = bytesIn
      told.bytesOut = bytesOut
    }
  }

  /** Records a denial and tells the listeners. */
  denied(denial: Denial): void {
    this.#deniedCount++
    if (this.#denied.length < DENIALS_KEPT) this.#denied.push(denial)
    for (const listener of this.#listeners) {
      try {
        listener(denial)
      } catch {
        // A surface that fails to show a denial must not stop the gate nor the other surfaces.
      }
    }
  }

  /** Calls `listener` at each denial from now on; returns the unsubscribe. */
  onDenied(listener: (denial: Denial) => void): () => void {
    // A wrapper, so that subscribing the same function twice gives two subscriptions.
    const own = (denial: Denial) => listener(denial)
    this.#listeners.add(own)
    return () => this.#listeners.delete(own)
  }

  /** The accounts now. */
  report(): GateReport {
    const byName: Record<string, Counts> = {}
    for (const [key, counts] of this.#byName) byName[key] = { ...counts }
    const total = { ...this.#closed }
    for (const [socket, key] of this.#open) {
      for (const counts of [total, byName[key]!]) {
        counts.bytesIn += socket.bytesRead
        counts.bytesOut += socket.bytesWritten
      }
    }
    return { ...total, byName, denied: [...this.#denied], deniedCount: this.#deniedCount }
  }

  #counts(key: string): Counts {
    let counts = this.#byName.get(key)
    if (counts === undefined) {
      counts = { connections: 0, bytesIn: 0, bytesOut: 0 }
      this.#byName.set(key, counts)
    }
    return counts
  }
}
