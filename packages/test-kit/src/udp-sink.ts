// A UDP listener a test points a tool at, to see what the tool sent (or that a sandbox stopped it).
import { randomUUID } from 'node:crypto'
import { createSocket } from 'node:dgram'

/** A UDP listener on 127.0.0.1 that keeps what reaches it: see {@link udpSink}. */
export interface UdpSink {
  readonly port: number
  /**
   * Sends a marker datagram from this process and waits for it, then returns (and forgets) the
   * datagrams that came before it: what a finished tool sent has been read by then, so a test
   * asserts "nothing came" without sleeping.
   */
  drain(): Promise<string[]>
  close(): Promise<void>
}

/** Opens a {@link UdpSink}. */
export async function udpSink(): Promise<UdpSink> {
  const socket = createSocket('udp4')
  const received: string[] = []
  let marked: (() => void) | undefined
  const marker = `udp-sink-marker-${randomUUID()}`
  socket.on('message', (message) => {
    const text = String(message)
    if (text === marker) marked?.()
    else received.push(text)
  })
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve))
  const port = socket.address().port
  return {
    port,
    async drain() {
      const arrived = new Promise<void>((resolve) => {
        marked = resolve
      })
      socket.send(marker, port, '127.0.0.1')
      await arrived
      return received.splice(0)
    },
    close: () => new Promise<void>((resolve) => socket.close(resolve)),
  }
}
