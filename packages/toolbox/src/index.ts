export type { AllowDash } from './allow-dash.js'
export type { Approval, ApprovalOutcome, ApprovalRequest } from './approval.js'
export { ApprovalToken } from './approval.js'
export type { BinaryToolDeps, CallOptions, LoadedTool, ToolsOfOptions } from './binary-tool.js'
export { contextOf, toolsOf } from './binary-tool.js'
export type { CutEvent, Fitted, FittedBytes, Renderer } from './budget.js'
export {
  cutText,
  ESCAPING,
  eventValue,
  fitBackward,
  fitBytes,
  fitForward,
  IN_JSON,
  rendererFor,
} from './budget.js'
export type { ToolboxErrorCode } from './errors.js'
export { ToolboxError, ToolboxErrorCodes, ToolboxWarningCodes } from './errors.js'
export type { HelpOptions } from './help.js'
export { helpTool } from './help.js'
export type { EntryOptions, LoadOptions, LoadOutcome, ToolboxEntry } from './loader.js'
export { loadTool, loadToolboxes, reportOf, toolboxFiles } from './loader.js'
export type { MailText } from './mail-text.js'
export { mailBlock } from './mail-text.js'
export type { ModeCall, ModeHandler, ModeStart, Modes, ProcessMode, ResultRules } from './modes.js'
export { createModes } from './modes.js'
export { providerSafeName, RESERVED_NAMES } from './names.js'
export { oneshotHandler } from './oneshot.js'
export type { Oneshots } from './oneshots.js'
export { createOneshots } from './oneshots.js'
export type { BinaryTools, BinaryToolsOptions } from './plugin.js'
export { createBinaryTools, ToolboxConfig, ToolboxEntryConfig, toolboxPlugin } from './plugin.js'
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
export { bytesText, describeExit, exitMeta, failure, outputCall, succeeded, text } from './results.js'
export type { Served, ServeOptions } from './serve.js'
export { serve } from './serve.js'
export type { StreamOptions } from './stream.js'
export { handedOver, placeholder, streamHandler } from './stream.js'
export { QUOTE_CHARACTERS, quoteInput, visibleJson, visibleLine, visibleText } from './text.js'
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
