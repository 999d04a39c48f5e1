import { randomBytes } from 'node:crypto'
import { constants } from 'node:os'
import type { Clearance, Refusal } from './admission.js'
import type { Client } from './client.js'

// The proxy's side of the handoff (decision 0111): an approved CONNECT from the bridge of
// `toolvisor-netns --handoff` is connected and carried by the bridge, so that the tunnel's bytes
// never pass through this process. `native/toolvisor-netns.c` describes the exchange byte by byte.

/** What the bridge writes first on each connection to a gate's unix socket, before any client byte. */
export const HELLO = Buffer.from('\0TVNB1\r\n', 'latin1')

/** The most of the client's bytes past the CONNECT head the bridge takes, in the frame or as REST (its REST_MAX). */
const REST_MAX = 1 << 20
/** The longest line the bridge sends on the control channel. */
const LINE_MAX = 64
/** How long past the connect timeout the bridge may take to say how connecting went. */
const GRACE_MS = 5_000

const FAIL = /^\0FAIL (\d{1,5})$/
const BYTES = /^\0(BYTES|DONE) (\d{1,16}) (\d{1,16})$/

/**
 * The frame: the addresses the bridge tries in order, within the timeout; the nonce of its fence;
 * how many of the client's bytes this proxy had read (`taken`: the CONNECT head and `left`), and
 * the length of `left`, the bytes past the head, which follow the line.
 */
export function frameLine(cleared: Clearance, nonce: string, taken: number, left: number): string {
  return `\0TVNH1 ${cleared.port} ${cleared.timeoutMs} ${nonce} ${cleared.addresses.join(',')} ${taken} ${left}\n`
}

/**
 * Hands an approved CONNECT to the bridge. The frame goes out as the first bytes on the connection
 * (the bridge looks at no later ones), with the client's bytes this proxy read past the CONNECT
 * head. Until the bridge's fence, what comes in is the client's too, sent before the bridge saw
 * the frame: it goes back as the REST bytes (only when there are some: the bridge knows how many
 * it sent, the frame how many were read). After the fence come the bridge's lines: OK (the
 * connection counted), FAIL (recorded as a failed dial would be; `refused` answers the client,
 * whose connection the bridge carries again), BYTES (the tunnel's bytes so far) and DONE (all of
 * them). The connection holds the client's slot until it closes; closing it (the gate closing)
 * ends the tunnel, and so does anything the bridge never says.
 *
 * Longer than 60 lines: the exchange with the bridge is one state machine (fencing, dialing, open,
 * over) whose steps share its state and buffer; apart, each would take them all as parameters.
 */
export function handOff(
  client: Client,
  cleared: Clearance,
  head: Buffer,
  refused: (refusal: Refusal) => void,
): void {
  const { socket } = client
  const nonce = randomBytes(16).toString('hex')
  const fence = Buffer.from(`\0FENCE ${nonce}\n`, 'latin1')
  let state: 'fencing' | 'dialing' | 'open' | 'over' = 'fencing'
  let pending: Buffer = Buffer.alloc(0)
  let tell: ((bytesIn: number, bytesOut: number) => void) | undefined
  // A bridge that never says how connecting went must not hold the slot for ever.
  const watchdog = setTimeout(() => socket.destroy(), cleared.timeoutMs + GRACE_MS)
  socket.once('close', () => {
    clearTimeout(watchdog)
    cleared.release()
  })
  // The bridge closes the channel after DONE (or after passing on the client's end, after FAIL).
  socket.once('end', () => socket.end())

  /** One line of the bridge's: whether more may follow; undefined for one it never sends here. */
  const said = (text: string): boolean | undefined => {
    if (state === 'dialing' && text === '\0OK') {
      clearTimeout(watchdog)
      tell = client.admission.carried(cleared)
      state = 'open'
      return true
    }
    const failed = FAIL.exec(text)
    if (state === 'dialing' && failed !== null) {
      clearTimeout(watchdog)
      state = 'over'
      const timedOut = Number(failed[1]) === constants.errno.ETIMEDOUT
      refused(client.admission.failed(cleared, timedOut ? 'timeout' : 'refused'))
      return false
    }
    const bytes = BYTES.exec(text)
    if (state === 'open' && bytes !== null) {
      tell?.(Number(bytes[2]), Number(bytes[3]))
      if (bytes[1] === 'BYTES') return true
      state = 'over'
      return false
    }
    return undefined
  }

  const take = (chunk: Buffer) => {
    // Over: after FAIL the client's own bytes, which nobody forwards; after DONE, the end.
    if (state === 'over') return
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
    if (state === 'fencing') {
      // The nonce went to the bridge only: no client can put the fence among its own bytes.
      const at = pending.indexOf(fence)
      if (at < 0) {
        if (pending.length > REST_MAX + fence.length) socket.destroy()
        return
      }
      const late = pending.subarray(0, at)
      if (late.length > 0) socket.write(Buffer.concat([Buffer.from(`\0REST ${late.length}\n`), late]))
      pending = pending.subarray(at + fence.length)
      state = 'dialing'
    }
    for (;;) {
      const end = pending.indexOf(0x0a)
      if (end < 0) {
        if (pending.length > LINE_MAX) socket.destroy()
        return
      }
      const text = pending.subarray(0, end).toString('latin1')
      pending = pending.subarray(end + 1)
      const more = said(text)
      if (more === undefined) return void socket.destroy()
      if (!more) return
    }
  }

  // Past the head: what came with it, and what the socket read since (paused since the CONNECT).
  const read = [head]
  for (let chunk = socket.read() as Buffer | null; chunk !== null; chunk = socket.read() as Buffer | null)
    read.push(chunk)
  const left = Buffer.concat(read)
  if (left.length > REST_MAX) return void socket.destroy() // more than the bridge takes: not a client that waits
  // Counted off the socket itself: every byte it read, but the bridge's hello.
  const taken = socket.bytesRead - HELLO.length
  socket.write(Buffer.concat([Buffer.from(frameLine(cleared, nonce, taken, left.length), 'latin1'), left]))
  socket.on('data', take)
}
