import { KernelError } from './errors.js'
import { pluginContext } from './internal/context.js'
import {
  type AnyPlugin,
  deferred,
  describeError,
  disposeError,
  type Entry,
  injectOf,
  validateConfig,
} from './internal/entry.js'
import type {
  Inject,
  PendingPlugin,
  Plugin,
  PluginContext,
  PluginHandle,
  PluginState,
  ReadyOptions,
} from './plugin.js'
import type { Token } from './token.js'

/**
 * The container every toolvisor package registers into. A plugin is applied as soon as every
 * token it injects has an active provider, whatever the order of `use()` calls; unloading a
 * provider first unloads what depends on it.
 *
 * @example
 * ```ts
 * await using kernel = new Kernel()
 * kernel.use(greeterPlugin)            // pending: injects 'clock'
 * await kernel.use(clockPlugin)        // active; greeter activates right after
 * kernel.get(Greeter)?.greet('ada')   // or kernel.require(Greeter).greet('ada'): throws if none
 * ```
 */
export class Kernel implements AsyncDisposable {
  readonly #entries: Entry[] = []
  readonly #providers = new Map<string, { entry: Entry; value: unknown }>()
  #activations = 0
  #disposed = false

  /**
   * Registers a plugin. The config is validated at once (a bad one throws
   * `KERNEL_ERR_INVALID_CONFIG` naming the field); the plugin then waits for its injected
   * services. The returned handle resolves when the plugin is active and rejects when it failed.
   */
  use<I extends Inject, C, In>(plugin: Plugin<I, C, In>, config?: In): PluginHandle {
    if (this.#disposed) {
      throw new KernelError(
        'KERNEL_ERR_DISPOSED',
        `cannot use plugin "${plugin.name}": the kernel is disposed`,
      )
    }
    const validated = validateConfig(plugin as unknown as AnyPlugin, config)
    const entry: Entry = {
      plugin: plugin as unknown as AnyPlugin,
      config: validated,
      inject: injectOf(plugin as unknown as AnyPlugin, validated),
      state: 'pending',
      unloading: false,
      controller: undefined,
      disposers: [],
      provided: [],
      applying: undefined,
      activation: 0,
      queue: Promise.resolve(),
      ready: deferred(),
    }
    this.#entries.push(entry)
    this.#reconcile()
    return this.#handle(entry)
  }

  /** The service behind a token when its provider is active, else `undefined`. */
  get<T>(token: Token<T>): T | undefined {
    const provider = this.#providers.get(token.key)
    return provider && this.#isAvailable(token.key) ? (provider.value as T) : undefined
  }

  /**
   * The service behind a token, typed `T` (after `await kernel.ready()`, typically); throws
   * `KERNEL_ERR_NOT_PROVIDED` when no active plugin provides it, saying why.
   */
  require<T>(token: Token<T>): T {
    if (this.#isAvailable(token.key)) return this.#providers.get(token.key)!.value as T
    const waiting = this.#entries.find(
      (entry) => entry.state === 'pending' && (entry.plugin.provides ?? []).some((t) => t.key === token.key),
    )
    const why = waiting
      ? `its provider ${waiting.plugin.name} is not active yet (it waits for ${this.#missing(waiting).join(', ') || 'its start'}): await kernel.ready() first`
      : 'no plugin used here provides it: use() the plugin that does'
    throw new KernelError('KERNEL_ERR_NOT_PROVIDED', `nothing provides ${token.key}: ${why}`)
  }

  /** Every plugin still waiting, with the token keys it misses. */
  pending(): PendingPlugin[] {
    return this.#entries
      .filter((entry) => entry.state === 'pending')
      .map((entry) => ({ name: entry.plugin.name, missing: this.#missing(entry) }))
  }

  /**
   * Resolves once every plugin used so far is active, in whatever order they were used (a slow
   * `apply` is waited for). Rejects with the failure of a plugin that failed
   * (`KERNEL_ERR_PLUGIN_FAILED`), or, when plugins still wait for tokens and nothing is loading
   * that could provide them for `timeoutMs`, with `KERNEL_ERR_PENDING` naming each waiting plugin
   * and what it misses: a missing provider is reported, never a hang.
   */
  async ready(options: ReadyOptions = {}): Promise<void> {
    const timeoutMs = options.timeoutMs ?? 5000
    let stuckSince: number | undefined
    for (;;) {
      const failed = this.#entries.find((entry) => entry.state === 'failed')
      if (failed) await failed.ready.promise // rejects with the plugin's failure
      const waiting = this.#entries.filter((entry) => entry.state === 'pending')
      const loading = this.#entries.some((entry) => entry.state === 'loading')
      if (waiting.length === 0 && !loading) return
      stuckSince = loading ? undefined : (stuckSince ?? Date.now())
      if (stuckSince !== undefined && Date.now() - stuckSince >= timeoutMs)
        throw this.#pendingError(timeoutMs)
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
  }

  #pendingError(timeoutMs: number): KernelError {
    const waiting = this.pending()
    const list = waiting.map((p) => `"${p.name}" waits for ${p.missing.map((k) => `'${k}'`).join(', ')}`)
    return new KernelError(
      'KERNEL_ERR_PENDING',
      `after ${timeoutMs} ms not every plugin is active: ${list.join('; ')}; use a plugin that provides what is missing`,
      { cause: waiting },
    )
  }

  /**
   * Unloads every plugin, dependents before providers, in reverse activation order. Each
   * plugin's signal is aborted first, then its disposers run last-registered first. Rejects with
   * `KERNEL_ERR_DISPOSE_FAILED` carrying every disposer error when any threw.
   */
  async dispose(): Promise<void> {
    this.#disposed = true
    const errors: unknown[] = []
    const order = [...this.#entries].sort((a, b) => b.activation - a.activation)
    for (const entry of order) await this.#unload(entry, 'disposed', errors)
    if (errors.length > 0) throw disposeError(errors)
  }

  /** Same as `dispose()`, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.dispose()
  }

  #handle(entry: Entry): PluginHandle {
    const kernel = this
    return {
      name: entry.plugin.name,
      get state() {
        return entry.state
      },
      get missing() {
        return kernel.#missing(entry)
      },
      async dispose() {
        const errors: unknown[] = []
        await kernel.#unload(entry, 'disposed', errors)
        if (errors.length > 0) throw disposeError(errors)
      },
      // biome-ignore lint/suspicious/noThenProperty: the handle is awaitable on purpose.
      then(onfulfilled, onrejected) {
        return entry.ready.promise.then(onfulfilled, onrejected)
      },
    }
  }

  #isAvailable(key: string): boolean {
    const provider = this.#providers.get(key)
    return provider !== undefined && provider.entry.state === 'active' && !provider.entry.unloading
  }

  #missing(entry: Entry): string[] {
    return Object.values(entry.inject)
      .map((token) => token.key)
      .filter((key) => !this.#isAvailable(key))
  }

  /** Starts every pending plugin whose injected services are all available. */
  #reconcile(): void {
    if (this.#disposed) return
    for (const entry of this.#entries) {
      if (entry.state === 'pending' && !entry.unloading && this.#missing(entry).length === 0)
        this.#start(entry)
    }
  }

  #start(entry: Entry): void {
    const controller = new AbortController()
    entry.state = 'loading'
    entry.controller = controller
    entry.disposers = []
    entry.provided = []
    const ctx = this.#context(entry, controller.signal)
    entry.applying = (async () => {
      try {
        await entry.plugin.apply(ctx, entry.config)
      } catch (error) {
        await this.#fail(entry, error)
        return
      }
      if (controller.signal.aborted) return // unloaded while applying: the unloader finishes the job
      entry.state = 'active'
      entry.activation = ++this.#activations
      entry.ready.resolve()
      this.#reconcile()
    })()
  }

  #context(entry: Entry, signal: AbortSignal): PluginContext {
    return pluginContext(entry, signal, this.#providers, (token) => this.get(token))
  }

  /** `apply` threw: undo what it registered and reject the handle with the cause. */
  async #fail(entry: Entry, cause: unknown): Promise<void> {
    const errors: unknown[] = []
    await this.#teardown(entry, errors)
    entry.state = 'failed'
    const extra = errors.length > 0 ? ` (and ${errors.length} disposer error(s) while undoing it)` : ''
    entry.ready.reject(
      new KernelError(
        'KERNEL_ERR_PLUGIN_FAILED',
        `plugin "${entry.plugin.name}" failed: ${describeError(cause)}${extra}`,
        {
          cause,
          errors,
        },
      ),
    )
  }

  /** Unloads an entry to `pending` (its provider went away) or `disposed`; serialised per entry. */
  #unload(entry: Entry, to: 'pending' | 'disposed', errors: unknown[]): Promise<void> {
    const run = async () => {
      if (entry.state === 'disposed') return
      if (entry.state === 'loading' || entry.state === 'active') {
        entry.unloading = true
        try {
          const dependents = this.#dependents(entry).sort((a, b) => b.activation - a.activation)
          for (const dependent of dependents) await this.#unload(dependent, 'pending', errors)
          entry.controller?.abort()
          await entry.applying
          // apply may have failed meanwhile: #fail already tore it down.
          if ((entry.state as PluginState) !== 'failed') await this.#teardown(entry, errors)
        } finally {
          entry.unloading = false
        }
      }
      if (entry.state === 'failed' && to === 'pending') return
      entry.state = to
      if (to === 'disposed') {
        entry.ready.reject(
          new KernelError(
            'KERNEL_ERR_DISPOSED',
            `plugin "${entry.plugin.name}" was disposed before it became active`,
          ),
        )
      }
    }
    entry.queue = entry.queue.then(run, run)
    return entry.queue.then(() => {
      if (to === 'disposed') this.#reconcile()
    })
  }

  /** Entries that are loading or active and inject a token this entry provides. */
  #dependents(entry: Entry): Entry[] {
    const keys = new Set(entry.provided)
    return this.#entries.filter(
      (other) =>
        other !== entry &&
        (other.state === 'active' || other.state === 'loading') &&
        Object.values(other.inject).some((token) => keys.has(token.key)),
    )
  }

  /** Aborts the signal, withdraws the services, runs the disposers last-first, collecting errors. */
  async #teardown(entry: Entry, errors: unknown[]): Promise<void> {
    entry.controller?.abort()
    for (const key of entry.provided) {
      if (this.#providers.get(key)?.entry === entry) this.#providers.delete(key)
    }
    entry.provided = []
    const disposers = entry.disposers.splice(0).reverse()
    for (const dispose of disposers) {
      try {
        await dispose()
      } catch (error) {
        errors.push(error)
      }
    }
  }
}
