import type { z } from 'zod'
import type { ServiceOf, Token } from './token.js'

/** What a plugin injects: a record of named tokens, e.g. `{ runtime: Runtime, tools: Tools }`. */
export type Inject = Readonly<Record<string, Token<unknown>>>

/** The typed services a plugin receives, one per injected token. */
export type Deps<I extends Inject> = { readonly [K in keyof I]: ServiceOf<I[K]> }

/** The life of a plugin in a kernel. */
export type PluginState = 'pending' | 'loading' | 'active' | 'failed' | 'disposed'

/** What `apply` receives. Valid until the plugin unloads; `signal` tells when that happens. */
export interface PluginContext<I extends Inject = Inject> {
  /** The injected services, each from an active provider. */
  readonly deps: Deps<I>
  /** Aborted when the plugin starts to unload, before any disposer runs. */
  readonly signal: AbortSignal
  /** An optional service: its value when a provider is active now, else `undefined`. Never pends. */
  get<T>(token: Token<T>): T | undefined
  /** Registers a service under a token the plugin listed in `provides`; active once `apply` returns. */
  provide<T>(token: Token<T>, value: T): void
  /** Runs `fn` when the plugin unloads; disposers run last-registered first. */
  onDispose(fn: () => void | Promise<void>): void
}

/**
 * A unit of composition: it names what it injects and provides, validates its config, and
 * registers its services in `apply`.
 *
 * @typeParam I - the injected tokens
 * @typeParam C - the config `apply` receives (the schema's output)
 * @typeParam In - the config `use()` accepts (the schema's input)
 */
export interface Plugin<I extends Inject = Inject, C = undefined, In = C> {
  /** A readable, unique name, used in every message about the plugin. */
  readonly name: string
  /**
   * The services the plugin needs; it stays pending until each has an active provider. A function
   * of the validated config when what it needs depends on it (the runtime injects the sandbox
   * mechanism its config names).
   */
  readonly inject?: I | ((config: C) => I)
  /** The tokens the plugin may provide; providing any other one fails. */
  readonly provides?: readonly Token<unknown>[]
  /** A zod schema for the config, validated when the plugin is used. */
  readonly config?: z.ZodType<C, In>
  /** Sets the plugin up. May be async; the plugin is active when it resolves. */
  apply(ctx: PluginContext<I>, config: C): void | Promise<void>
}

/** What `kernel.use()` returns: the plugin's state, and a promise of its activation. */
export interface PluginHandle extends PromiseLike<void> {
  /** The plugin's name. */
  readonly name: string
  /** Where the plugin is in its life. */
  readonly state: PluginState
  /** The keys of injected tokens that have no active provider now. */
  readonly missing: readonly string[]
  /** Unloads the plugin: its dependents first (they return to pending), then its own disposers. */
  dispose(): Promise<void>
}

/** Options of `kernel.ready()`. */
export interface ReadyOptions {
  /** How long plugins may wait for what they miss with nothing changing. Default 5 s. */
  readonly timeoutMs?: number
}

/** One entry of `kernel.pending()`. */
export interface PendingPlugin {
  /** The plugin's name. */
  readonly name: string
  /** The keys of the tokens it still waits for. */
  readonly missing: readonly string[]
}

/**
 * Declares a plugin with its types inferred; it returns the plugin unchanged.
 *
 * @example
 * ```ts
 * export const clockPlugin = definePlugin({
 *   name: 'clock',
 *   provides: [Clock],
 *   apply(ctx) { ctx.provide(Clock, { now: () => Date.now() }) },
 * })
 * ```
 */
export function definePlugin<I extends Inject = Inject, C = undefined, In = C>(
  plugin: Plugin<I, C, In>,
): Plugin<I, C, In> {
  return plugin
}
