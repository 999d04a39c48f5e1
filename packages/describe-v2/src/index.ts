export type { AllowDashOutcome } from './allow-dash.js'
export { allowDashFor } from './allow-dash.js'
export type { DescribeErrorCode, ErrorCode, LoadingErrorDetails } from './errors.js'
export { ArgumentError, DescribeErrorCodes, LoadingError } from './errors.js'
export { compileEventSchema } from './event-schema.js'
export { closeName } from './internal/similar.js'
export { limitKey, limitsSchema } from './limits.js'
export { internalName } from './naming.js'
export { parseDescribe } from './parse.js'
export type { DescribeService } from './plugin.js'
export { createDescribeService, DescribeToken, describePlugin } from './plugin.js'
export { inputSchema, renderCall } from './render.js'
export type {
  ArgMode,
  ArgSpec,
  BackingType,
  CancelSpec,
  CommandSpec,
  DigestSpec,
  EmptyResult,
  EventValidator,
  Framing,
  InputSchema,
  InputSpec,
  JsonSchema,
  LimitsSpec,
  OutputSpec,
  ProcessSpec,
  ReadySpec,
  RenderedCall,
  RunAsDeclaration,
  RuntimeSpec,
  SandboxDeclaration,
  TerminalSize,
  TimeoutSpec,
  ToolSpec,
} from './types.js'
