export type {
  BackendReport,
  CapabilityConfig,
  CapabilityReport,
  ResolvedCapability,
  ResolveOptions,
} from './capabilities.js'
export {
  capabilityTool,
  ordered,
  resolveCapability,
  serveCapability,
  unknownOverrides,
  whyNoBackend,
} from './capabilities.js'
export type { CheckResult, CheckStatus } from './check.js'
export { CheckCache, cachedCheck, checkKey, loadFailureStatus, runCheck } from './check.js'
export type { CapabilityErrorCode } from './errors.js'
export { CapabilityErrorCodes, CapabilityWarningCodes } from './errors.js'
export type { Capabilities } from './plugin.js'
export { CapabilitiesConfig, CapabilitiesToken, cacheFileIn, capabilitiesPlugin } from './plugin.js'
