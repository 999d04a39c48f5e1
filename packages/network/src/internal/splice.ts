import type { Socket } from 'node:net'

/**
 * Joins two connected sockets both ways. `pipe` carries the backpressure: a side that cannot
 * take more stops the other side's reading, so a connection holds at most a stream buffer or two
 * in the proxy whatever the difference in speed. An end travels across as an end (half-close), so
 * a client that shuts its sending side still gets the answer. A side that closes before its end
 * came (an error, a reset, the gate closing) takes the other down with it.
 */
export function splice(a: Socket, b: Socket): void {
  a.pipe(b)
  b.pipe(a)
  const across = (closed: Socket, other: Socket) => (hadError: boolean) => {
    if (hadError || !closed.readableEnded) other.destroy()
  }
  a.once('close', across(a, b))
  b.once('close', across(b, a))
}
