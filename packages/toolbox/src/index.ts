export type { BinaryToolDeps, CallOptions, LoadedTool } from './binary-tool.js'
export { placeholder, toolsOf } from './binary-tool.js'
export type { ToolboxErrorCode } from './errors.js'
export { ToolboxError, ToolboxErrorCodes } from './errors.js'
export { helpTool } from './help.js'
export type { LoadOptions, LoadOutcome, ToolboxEntry } from './loader.js'
export { loadTool, loadToolboxes, reportOf } from './loader.js'
export { providerSafeName } from './names.js'
export type { BinaryTools } from './plugin.js'
export { createBinaryTools, ToolboxConfig, ToolboxEntryConfig, toolboxPlugin } from './plugin.js'
export { createToolRegistry } from './registry.js'
export { describeExit, failure, succeeded, text } from './results.js'
export { BinaryToolsToken, ToolsToken } from './tokens.js'
export type {
  LoadReport,
  Tool,
  ToolCallContext,
  ToolContent,
  ToolInputSchema,
  ToolProgress,
  ToolRegistry,
  ToolResult,
} from './types.js'
