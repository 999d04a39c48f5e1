export type { ApprovalConnection } from './approval.js'
export {
  APPROVAL_FOOTER,
  approvalMessage,
  JUSTIFICATION_CHARACTERS,
  McpApprovals,
  mcpApprovalPlugin,
} from './approval.js'
export type { BridgeOptions, Upstream, UpstreamSession } from './bridge.js'
export { bridgeStdio, callUpstream } from './bridge.js'
export type { McpServerErrorCode } from './errors.js'
export { McpServerError, McpServerErrorCodes } from './errors.js'
export type { HttpSurface, Listen, Route, ServeHttpOptions } from './http.js'
export { serveHttp } from './http.js'
export { sameToken } from './internal/http-guard.js'
export { SESSION_HEADER } from './internal/http-sessions.js'
export { PRESENTATION_META_KEY } from './internal/result.js'
export { MCP_DEFAULT_LIMITS } from './limits.js'
export type { McpServerOptions, McpSurface } from './server.js'
export { createMcpServer } from './server.js'
export type { ServeStdioOptions } from './stdio.js'
export { serveStdio } from './stdio.js'
