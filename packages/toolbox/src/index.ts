export type { AllowDash } from './allow-dash.js'
export type { Approval, ApprovalOutcome, ApprovalRequest } from './approval.js'
export { ApprovalToken } from './approval.js'
export type { ArgsOf, ArgsRules, Checked, DeclaredArgs, Field, FieldContext, Fields } from './arguments.js'
export { argsSchema, declareArgs, required } from './arguments.js'
export { argvLabel } from './argv-label.js'
export type { BinaryToolDeps, LoadedTool } from './binary-tool.js'
export { contextOf } from './binary-tool.js'
export type { ToolboxErrorCode } from './errors.js'
export { ToolboxError, ToolboxErrorCodes, ToolboxWarningCodes } from './errors.js'
export type { KeptOutcome } from './kept.js'
export { adoptKept } from './kept.js'
export type { EntryOptions, LoadOptions, LoadOutcome, ToolboxEntry } from './loader.js'
export { loadToolboxes, toolboxFiles } from './loader.js'
export type {
  KeptAdopter,
  ModeCall,
  ModeHandler,
  ModeStart,
  Modes,
  ProcessMode,
  ResultRules,
} from './modes.js'
export { RESERVED_NAMES } from './names.js'
export type { Oneshots } from './oneshots.js'
export type { BinaryTools } from './plugin.js'
export { ToolboxConfig, ToolboxEntryConfig, toolboxPlugin } from './plugin.js'
export type {
  CallCard,
  GenericCard,
  ResultCard,
  TerminalCallCard,
  TerminalResultCard,
  ToolAnnotations,
} from './presentation.js'
export { createToolRegistry } from './registry.js'
export type { FailureOptions } from './results.js'
export { describeExit, failure, succeeded, text } from './results.js'
export type { Served, ServeOptions } from './serve.js'
export { serve } from './serve.js'
export { handedOver, placeholder } from './stream.js'
export { BinaryToolsToken, ModesToken, OneshotsToken, ToolsToken } from './tokens.js'
export type {
  ConnectionId,
  Guidance,
  LoadReport,
  TaskHandover,
  Tool,
  ToolCallContext,
  ToolContent,
  ToolInputSchema,
  ToolProgress,
  ToolRegistry,
  ToolResult,
} from './types.js'
