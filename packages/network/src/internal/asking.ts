import { hostPort } from './host.js'

/** An operator's answer to a host and port the rules do not list. */
export type Answer = 'once' | 'session' | 'deny'

/**
 * `ask`, so that connections to the same host and port while an answer is pending share it (one
 * elicitation, not one per connection a program opens at once). Anything but `once` or `session`,
 * a rejection included, is `deny`: the gate fails closed.
 */
export function sharedAsk(
  ask: (host: string, port: number) => Promise<Answer>,
): (host: string, port: number) => Promise<Answer> {
  const pending = new Map<string, Promise<Answer>>()
  return (host, port) => {
    const key = hostPort(host, port)
    const waiting = pending.get(key)
    if (waiting !== undefined) return waiting
    const answer = Promise.resolve()
      .then(() => ask(host, port))
      .then(
        (given): Answer => (given === 'once' || given === 'session' ? given : 'deny'),
        (): Answer => 'deny',
      )
      .finally(() => pending.delete(key))
    pending.set(key, answer)
    return answer
  }
}
