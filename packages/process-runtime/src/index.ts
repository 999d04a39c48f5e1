export type { CgroupLimits, TreeUsage } from '@toolvisor/containment'
export { markedProcesses } from '@toolvisor/containment'
export type { Account } from './accounts.js'
export type { DecodeSink, EventValue, InvalidEvent } from './decode.js'
export type { EnvdirVariables } from './envdir.js'
export type { EnvdirPermissions } from './envdir-root.js'
export type { EffectivePolicy, EnvironmentPolicy } from './environment.js'
export { CORE_VARIABLES, DEFAULT_EXCLUDES, inherited } from './environment.js'
export type { RuntimeErrorCode } from './errors.js'
export { RuntimeError, RuntimeErrorCodes } from './errors.js'
export type { EventPage, SequencedEvent } from './event-log.js'
export { builtExecHelper, nativeProblem } from './exec-helper.js'
export { pinnedExecutable } from './executable.js'
export type {
  ExtraFd,
  Launch,
  Launchers,
  MechanismDescription,
  OwnPath,
  Pin,
  Placeholder,
  ProcessControl,
  Qualification,
  Rlimit,
  RunAsMechanism,
  RunAsTarget,
  SandboxField,
  SandboxMechanism,
  SandboxPolicy,
  SpawnedChild,
} from './launchers.js'
export { CLEAN_ENVIRONMENT, executableFd, grantFd } from './launchers.js'
export type { AppliedLimits, LimitsPolicy } from './limits.js'
export { HOUSE_LIMITS, show as showLimit } from './limits.js'
export type { OwnPathOption } from './own-paths.js'
export { installation } from './own-paths.js'
export type { PlainProcessSpec } from './plain.js'
export { defaultStateDir, EnvironmentPolicyConfig, RuntimeConfig, runtimePlugin } from './plugin.js'
export { signalGroup } from './process-util.js'
export { PROTECTED_PATHS } from './protected.js'
export type { ProtectedTarget } from './protection.js'
export { Placeholders, protectedTargets } from './protection.js'
export { createLaunchers } from './registry.js'
export { setprivRunAs } from './run-as.js'
export { RAW_ONESHOT, Runtime } from './runtime.js'
export type { ExtraStream } from './spawn.js'
export { assemble, openFailure, pinFailure, spawnLaunch, typeFailure, wireExtras } from './spawn.js'
export type {
  CgroupPlacement,
  Child,
  Spawned,
  Spawner,
  SpawnerFacts,
  SpawnOptions,
  SpillStages,
  WarmAnswer,
  WarmPlan,
} from './spawner.js'
export { nodeSpawner } from './spawner.js'
export type { SpillAllowance, SpillCut } from './spill-cut.js'
export { spillCutText } from './spill-cut.js'
export type { StartedWith } from './started-with.js'
export { trustStateDir } from './state-dir.js'
export type { StreamBytes, StreamRange } from './stream-bytes.js'
export { endOf, newestBytes } from './stream-bytes.js'
export { LaunchersToken, RuntimeToken, sandboxMechanismToken, spawnerToken } from './tokens.js'
export type {
  CapturedOutput,
  ContainmentFacts,
  EndReason,
  LaunchFacts,
  Lifecycle,
  LimitHit,
  LostProcess,
  ManagedProcess,
  PreparedTool,
  PrepareInput,
  ProcessCounters,
  ProcessExit,
  ProcessOutputView,
  ProcessRuntime,
  ResolvedRuntimeOptions,
  RunContext,
  RuntimeOptions,
  StartOptions,
  UndefaultedRuntimeOption,
} from './types.js'
