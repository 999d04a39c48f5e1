import { KernelError } from '../errors.js'
import type { PluginContext } from '../plugin.js'
import type { Token } from '../token.js'
import type { Entry } from './entry.js'

/** Who provides each token, and what. */
export type Providers = Map<string, { readonly entry: Entry; readonly value: unknown }>

/**
 * The context a plugin's `apply` gets: its injected services, its signal, and `provide`/
 * `onDispose`, which refuse to work once the plugin is unloaded and refuse a token it did not
 * declare or that another plugin provides.
 */
export function pluginContext(
  entry: Entry,
  signal: AbortSignal,
  providers: Providers,
  get: <T>(token: Token<T>) => T | undefined,
): PluginContext {
  const name = entry.plugin.name
  const deps: Record<string, unknown> = {}
  for (const [alias, token] of Object.entries(entry.inject)) deps[alias] = providers.get(token.key)?.value
  const assertLive = (what: string) => {
    if (entry.state !== 'loading' && entry.state !== 'active') {
      throw new KernelError('KERNEL_ERR_DISPOSED', `plugin "${name}" called ${what} after it was unloaded`)
    }
  }
  return {
    deps: Object.freeze(deps),
    signal,
    get,
    provide(token, value) {
      assertLive(`provide('${token.key}')`)
      if (!(entry.plugin.provides ?? []).some((declared) => declared.key === token.key)) {
        throw new KernelError(
          'KERNEL_ERR_UNDECLARED_PROVIDE',
          `plugin "${name}" provided '${token.key}' without listing it in provides; add it to the plugin's provides`,
        )
      }
      const holder = providers.get(token.key)
      if (holder) {
        const other = holder.entry === entry ? 'itself, earlier' : `plugin "${holder.entry.plugin.name}"`
        throw new KernelError(
          'KERNEL_ERR_DUPLICATE_PROVIDER',
          `plugin "${name}" cannot provide '${token.key}': it is already provided by ${other}; dispose one of them`,
        )
      }
      providers.set(token.key, { entry, value })
      entry.provided.push(token.key)
    },
    onDispose(fn) {
      assertLive('onDispose()')
      entry.disposers.push(fn)
    },
  }
}
