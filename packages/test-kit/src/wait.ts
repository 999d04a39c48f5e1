// Waiting on what a test is about instead of sleeping a fixed time: a condition polled until it
// holds, a promise bounded so that a hang is an outcome, and a FIFO's reader probed.
import { closeSync, constants, openSync } from 'node:fs'

/**
 * Polls `check` every 20 ms until it holds or `timeoutMs` passed, and returns its last answer:
 * what tests wait on instead of sleeping a fixed time.
 */
export async function eventually(check: () => boolean, timeoutMs = 5_000): Promise<boolean> {
  const end = Date.now() + timeoutMs
  for (;;) {
    if (check()) return true
    if (Date.now() > end) return false
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** `promise`'s value, or 'no answer' when it takes longer than `ms`: a hang seen as an outcome. */
export async function within<T>(promise: Promise<T>, ms: number): Promise<T | 'no answer'> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<'no answer'>((resolve) => {
    timer = setTimeout(() => resolve('no answer'), ms)
  })
  try {
    return await Promise.race([promise, late])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * Whether anything holds `fifo` open for reading, or waits in open(2) to: a writer's non-blocking
 * open then succeeds; with no reader it fails with ENXIO. (Its open also ends the wait of a reader
 * stuck in open(2), which lets a launch blocked there go on, and the test end.)
 */
export function hasReader(fifo: string): boolean {
  try {
    closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK))
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENXIO') return false
    throw error
  }
}
