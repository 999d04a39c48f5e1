export type { CodeOf, KernelErrorCode } from './errors.js'
export { errorFamily, KernelError, KernelErrorCodes, ToolvisorError } from './errors.js'
export { Kernel } from './kernel.js'
export type {
  Deps,
  Inject,
  PendingPlugin,
  Plugin,
  PluginContext,
  PluginHandle,
  PluginState,
  ReadyOptions,
} from './plugin.js'
export { definePlugin } from './plugin.js'
export type { ServiceOf, Token } from './token.js'
export { token } from './token.js'
