export type { Field, Fields, Kind, Parsed, ValueOf } from './args.js'
export type { BashOptions, ProfileName } from './config.js'
export { BashConfig, BashConfigFields, PROFILES } from './config.js'
export type { BashErrorCode } from './errors.js'
export { BashError, BashErrorCodes } from './errors.js'
export type { BackgroundShellInfo, BashHost } from './host.js'
export { BashToken, createBashHost } from './host.js'
export type { SandboxMode } from './modes.js'
export {
  denialMarker,
  ESCALATION_COMMAND_LIMITS,
  ESCALATION_HINT,
  ESCALATION_MODES,
  ESCALATION_TEXTS,
  SANDBOX_MODES,
} from './modes.js'
export { bashPlugin } from './plugin.js'
export {
  ANNOTATIONS,
  presentBashCall,
  presentBashResult,
  presentTaskCall,
  presentTaskResult,
} from './present.js'
export { toolnexusStatus } from './profiles/codex-like.js'
export type { HyperhiveReport, HyperhiveStatus } from './profiles/daemon-like.js'
export { BASH_GUIDANCE } from './profiles.js'
export type { Delta, RunEnd } from './render.js'
export { completionNotice, outputText, renderRun, statusLine } from './render.js'
