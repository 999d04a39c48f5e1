export type { CgroupLimits, TreeUsage } from '@toolvisor/containment'
export { markedProcesses } from '@toolvisor/containment'
/** The launchers seam, whole: every type of `@toolvisor/launchers` is one of this package's. */
export type * from '@toolvisor/launchers'
export {
  CLEAN_ENVIRONMENT,
  createLaunchers,
  executableFd,
  grantFd,
  LaunchersToken,
  Placeholders,
  PROTECTED_PATHS,
  pinnedExecutable,
  protectedTargets,
  RuntimeError,
  RuntimeErrorCodes,
  sandboxMechanismToken,
} from '@toolvisor/launchers'
export type { SpillAllowance, SpillCut } from '@toolvisor/run-state'
export { spillCutText, trustStateDir } from '@toolvisor/run-state'
export type { Account } from './accounts.js'
export type { DecodeSink, EventValue, InvalidEvent } from './decode.js'
export type { EnvdirVariables } from './envdir.js'
export type { EnvdirPermissions } from './envdir-root.js'
export type { EffectivePolicy, EnvironmentPolicy } from './environment.js'
export { CORE_VARIABLES, DEFAULT_EXCLUDES, inherited } from './environment.js'
export type { EventPage, SequencedEvent } from './event-log.js'
export { builtExecHelper, nativeProblem } from './exec-helper.js'
export type { AppliedLimits, LimitsPolicy } from './limits.js'
export { HOUSE_LIMITS, show as showLimit } from './limits.js'
export type { OwnPathOption } from './own-paths.js'
export { installation } from './own-paths.js'
export type { PlainProcessSpec } from './plain.js'
export { defaultStateDir, EnvironmentPolicyConfig, RuntimeConfig, runtimePlugin } from './plugin.js'
export { signalGroup } from './process-util.js'
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
export type { StartedWith } from './started-with.js'
export type { StreamBytes, StreamRange } from './stream-bytes.js'
export { endOf, newestBytes } from './stream-bytes.js'
export { RuntimeToken, spawnerToken } from './tokens.js'
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
  ProcessRuntime,
  ResolvedRuntimeOptions,
  RunContext,
  RuntimeOptions,
  StartOptions,
  UndefaultedRuntimeOption,
} from './types.js'
