import { KernelError } from '../errors.js'
import type { Inject, Plugin, PluginState } from '../plugin.js'

export type AnyPlugin = Plugin<Inject, unknown, unknown>
export type Disposer = () => void | Promise<void>

/** The kernel's bookkeeping for one `use()`. */
export interface Entry {
  readonly plugin: AnyPlugin
  readonly config: unknown
  /** What it injects, decided once its config is known. */
  readonly inject: Inject
  state: PluginState
  /** Set while the entry is being unloaded: its services stop counting as available at once. */
  unloading: boolean
  controller: AbortController | undefined
  disposers: Disposer[]
  /** The keys this entry provided in its current activation. */
  provided: string[]
  /** Settles when the current `apply` has settled. */
  applying: Promise<void> | undefined
  /** Order of the latest activation; disposal runs in reverse of it. */
  activation: number
  /** Serialises unloads of this entry. */
  queue: Promise<void>
  readonly ready: Deferred
}

export interface Deferred {
  readonly promise: Promise<void>
  resolve(): void
  reject(error: unknown): void
}

export function deferred(): Deferred {
  let resolve!: () => void
  let reject!: (error: unknown) => void
  const promise = new Promise<void>((res, rej) => {
    resolve = res
    reject = rej
  })
  // A handle nobody awaits must not become an unhandled rejection.
  promise.catch(() => {})
  return { promise, resolve, reject }
}

/** A plugin's injected tokens for its validated config (`inject` may be a function of it). */
export function injectOf(plugin: AnyPlugin, config: unknown): Inject {
  const inject = plugin.inject
  return typeof inject === 'function' ? (inject as (config: unknown) => Inject)(config) : (inject ?? {})
}

export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

export function validateConfig(plugin: AnyPlugin, config: unknown): unknown {
  if (!plugin.config) return config
  const result = plugin.config.safeParse(config)
  if (result.success) return result.data
  const problems = result.error.issues.map((issue) => {
    const path = issue.path.length > 0 ? `config.${issue.path.map(String).join('.')}` : 'config'
    return `${path}: ${issue.message}`
  })
  throw new KernelError(
    'KERNEL_ERR_INVALID_CONFIG',
    `plugin "${plugin.name}" got an invalid config: ${problems.join('; ')}`,
    { cause: result.error },
  )
}

export function disposeError(errors: unknown[]): KernelError {
  const list = errors.map(describeError).join('; ')
  return new KernelError('KERNEL_ERR_DISPOSE_FAILED', `${errors.length} disposer(s) failed: ${list}`, {
    errors,
    cause: new AggregateError(errors, 'disposers failed'),
  })
}
