export type { RuntimeErrorCode } from './errors.js'
export { RuntimeError, RuntimeErrorCodes } from './errors.js'
export { pinnedExecutable } from './executable.js'
export type {
  ExtraFd,
  Launch,
  Launchers,
  MechanismDescription,
  OwnPath,
  Pin,
  ProcessControl,
  Qualification,
  Rlimit,
  RunAsMechanism,
  RunAsTarget,
  SandboxField,
  SandboxMechanism,
  SandboxPolicy,
  SpawnedChild,
  TerminalSize,
} from './launchers.js'
export { CLEAN_ENVIRONMENT, executableFd, grantFd } from './launchers.js'
export type { NetAllowList, NetPolicy, NetworkRoute } from './net-policy.js'
export { isAllowList } from './net-policy.js'
export type {
  GateOpening,
  NetDenial,
  NetReport,
  NetworkFacts,
  NetworkGate,
  NetworkGates,
} from './network.js'
export type { Placeholder } from './placeholder.js'
export { removePlaceholder } from './placeholder.js'
export { PROTECTED_PATHS, protectedPaths } from './protected.js'
export type { ProtectedTarget } from './protection.js'
export { Placeholders, protectedTargets } from './protection.js'
export { createLaunchers } from './registry.js'
export { LaunchersToken, NetworkGatesToken, sandboxMechanismToken } from './tokens.js'
