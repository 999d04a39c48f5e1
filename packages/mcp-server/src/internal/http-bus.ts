import { AsyncLocalStorage } from 'node:async_hooks'
import type { ServerEvent, ServerEventBus } from '@modelcontextprotocol/server'

/** The session of the request being served, for the listen streams it opens. */
export const requestSession = new AsyncLocalStorage<string>()

/** Watches one session's mail for its listen streams; returns the unwatching. */
export type MailWatch = (session: string, tell: (event: ServerEvent) => void) => () => void

/**
 * The bus of the modern leg's listen streams: a list change reaches every stream, and an event of
 * one session (its mail) only that session's streams, so no client hears of another session's
 * mail. A stream's session is the one its request was served in; the mail of a session is watched
 * while it has a stream open.
 */
export class SessionBus implements ServerEventBus {
  readonly #listeners = new Map<(event: ServerEvent) => void, string | undefined>()
  readonly #watches = new Map<string, { count: number; readonly stop: () => void }>()

  constructor(private readonly watch: MailWatch | undefined) {}

  publish(event: ServerEvent): void {
    // A session's own events come through `#tell`; what is published here is for everyone.
    for (const listener of [...this.#listeners.keys()]) deliver(listener, event)
  }

  subscribe(listener: (event: ServerEvent) => void): () => void {
    const session = requestSession.getStore()
    this.#listeners.set(listener, session)
    if (session !== undefined && this.watch !== undefined) this.#watch(session, this.watch)
    let subscribed = true
    return () => {
      if (!subscribed) return
      subscribed = false
      this.#listeners.delete(listener)
      if (session !== undefined) this.#unwatch(session)
    }
  }

  #watch(session: string, watch: MailWatch): void {
    const held = this.#watches.get(session)
    if (held !== undefined) held.count++
    else this.#watches.set(session, { count: 1, stop: watch(session, (event) => this.#tell(session, event)) })
  }

  #unwatch(session: string): void {
    const held = this.#watches.get(session)
    if (held === undefined || --held.count > 0) return
    this.#watches.delete(session)
    held.stop()
  }

  #tell(session: string, event: ServerEvent): void {
    for (const [listener, of] of [...this.#listeners]) if (of === session) deliver(listener, event)
  }
}

/** One listener's delivery: a listener that throws does not stop the others. */
function deliver(listener: (event: ServerEvent) => void, event: ServerEvent): void {
  try {
    listener(event)
  } catch {
    // The SDK's router reports its own failures; a broken stream is torn down by it.
  }
}
