import type { McpServerOptions } from '../server.js'
import { messageOf } from './result.js'

/** A promise and what resolves it (Node 20 has no `Promise.withResolvers`). */
export function latch(): [Promise<void>, () => void] {
  let resolve!: () => void
  const promise = new Promise<void>((r) => {
    resolve = r
  })
  return [promise, resolve]
}

/** Waits for the first load (never failing, and at most `firstLoadWaitMs`); at once once it is done. */
export function firstLoadOf(options: McpServerOptions): () => Promise<void> {
  const first = options.firstLoad
  if (first === undefined) return () => Promise.resolve()
  let done = false
  const settled = first.then(
    () => {
      done = true
    },
    () => {
      done = true
    },
  )
  return async () => {
    if (done) return
    let timer: NodeJS.Timeout | undefined
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, options.firstLoadWaitMs ?? 15_000)
    })
    await Promise.race([settled, bound])
    clearTimeout(timer)
  }
}

/** Closes the connection's session (stopping what it owns), unless it is kept; never rejects. */
export async function endSession(
  options: McpServerOptions,
  sessionId: string,
  log: (line: string) => void,
): Promise<void> {
  const { sessions } = options
  if (sessions === undefined || options.keepSession || sessions.get(sessionId) === undefined) return
  try {
    await sessions.close(sessionId, 'disconnected')
  } catch (error) {
    log(`closing session ${sessionId}: ${messageOf(error)}`)
  }
}
