/**
 * A service key. The `key` is a readable string (`'runtime'`, `'tools'`) used in messages and in
 * `kernel.pending()`; the type parameter is a phantom that types `ctx.deps` and `kernel.get()`.
 */
export interface Token<T> {
  /** The readable name of the service, unique per kernel. */
  readonly key: string
  /** Never set at run time: carries the service type for the compiler only. */
  readonly __service?: T
}

/** The service type a token stands for. */
export type ServiceOf<K> = K extends Token<infer T> ? T : never

/**
 * Creates a service key.
 *
 * @example
 * ```ts
 * const Runtime = token<ProcessRuntime>('runtime')
 * ```
 */
export function token<T>(key: string): Token<T> {
  if (key.length === 0) throw new TypeError('token(key): the key must be a non-empty string')
  return Object.freeze({ key })
}
