export type { NetworkErrorCode } from './errors.js'
export { NetworkError, NetworkErrorCodes } from './errors.js'
export type { NetworkGatesOptions } from './gates.js'
export { covers, networkGates, proxyEnvironment } from './gates.js'
export type { NetnsHelperStatus, NetworkNamespaceOptions, PublishedPort } from './netns.js'
export { builtNetnsHelper, inNetworkNamespace, NAMESPACE_PROXY_PORT, netnsHelperStatus } from './netns.js'
export { NetworkConfig, networkPlugin } from './plugin.js'
export type {
  Denial,
  Gate,
  GateReport,
  GateRequest,
  NameReport,
  NetEntry,
  NetProxy,
  NetRules,
  ProxyOptions,
} from './proxy.js'
export { createProxy, denialMarker, parseNetEntry } from './proxy.js'
