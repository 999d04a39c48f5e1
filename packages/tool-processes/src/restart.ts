/** How `on_exit: restart` restarts a service (ruling 17), as the operator configures it. */
export interface RestartPolicy {
  /** The first delay, in ms; each next one doubles. Default 1000 (1 s). */
  readonly baseMs: number
  /** The longest delay, in ms. Default 30 000 (30 s). */
  readonly maxMs: number
  /** Restarts in a row before the service is `failed`. Default 5. */
  readonly max: number
  /** A run that stayed up this long (ms) ends the row: the next restart is the first again. Default 60 000. */
  readonly resetAfterMs: number
}

/** Ruling 17: 1, 2, 4 ... 30 s, at most 5 restarts in a row. */
export const DEFAULT_RESTART: RestartPolicy = { baseMs: 1000, maxMs: 30_000, max: 5, resetAfterMs: 60_000 }

/** The delay before restart `n` (1-based) of a row: `baseMs * 2^(n-1)`, at most `maxMs`. */
export function restartDelay(n: number, policy: RestartPolicy): number {
  return Math.min(policy.maxMs, policy.baseMs * 2 ** Math.max(0, n - 1))
}
