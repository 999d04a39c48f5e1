import { connect, type Socket } from 'node:net'

/** How dialing ended: a connected socket, or why not. */
export type Dialed =
  | { readonly ok: true; readonly socket: Socket }
  | { readonly ok: false; readonly why: 'refused' | 'timeout' | 'aborted' }

/** Options of {@link dial}. */
export interface DialOptions {
  /** The bound on all attempts together. */
  readonly timeoutMs: number
  /** Aborted when nobody waits for the connection any more (the client left, the gate closed). */
  readonly signal: AbortSignal
  /** Told of every socket made, connected or not, so that closing the gate can end it. */
  readonly track: (socket: Socket) => void
}

/**
 * Connects to `port` on the first of `addresses` that answers, trying each in turn. Half-open
 * stays allowed (a tunnel carries one direction's end to the other), and Nagle is off: the proxy
 * forwards what it reads at once, and a small write held back is latency the program would see.
 */
export function dial(addresses: readonly string[], port: number, options: DialOptions): Promise<Dialed> {
  return new Promise((resolve) => {
    let current: Socket | undefined
    let next = 0
    let settled = false
    const finish = (dialed: Dialed) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      options.signal.removeEventListener('abort', abort)
      if (!dialed.ok) current?.destroy()
      resolve(dialed)
    }
    const abort = () => finish({ ok: false, why: 'aborted' })
    const timer = setTimeout(() => finish({ ok: false, why: 'timeout' }), options.timeoutMs)
    const attempt = () => {
      const address = addresses[next++]
      if (address === undefined) return finish({ ok: false, why: 'refused' })
      const socket = connect({ host: address, port, allowHalfOpen: true, noDelay: true })
      current = socket
      options.track(socket)
      socket.once('connect', () => finish({ ok: true, socket }))
      socket.once('error', () => {
        socket.destroy()
        if (!settled) attempt()
      })
    }
    if (options.signal.aborted) return abort()
    options.signal.addEventListener('abort', abort, { once: true })
    attempt()
  })
}
