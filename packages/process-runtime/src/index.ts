export type { CgroupLimits, TreeUsage } from '@toolvisor/containment'
export { markedProcesses } from '@toolvisor/containment'
/** The launchers seam, whole: every type of `@toolvisor/launchers` is one of this package's. */
export type * from '@toolvisor/launchers'
export {
  CLEAN_ENVIRONMENT,
  createLaunchers,
  executableFd,
  grantFd,
  isAllowList,
  LaunchersToken,
  NetworkGatesToken,
  Placeholders,
  PROTECTED_PATHS,
  pinnedExecutable,
  protectedTargets,
  RuntimeError,
  RuntimeErrorCodes,
  sandboxMechanismToken,
} from '@toolvisor/launchers'
export type {
  CapturedOutput,
  DecodeSink,
  EventPage,
  EventValue,
  InvalidEvent,
  ProcessCounters,
  ProcessOutputView,
  SequencedEvent,
  SpillStages,
  StreamBytes,
  StreamRange,
} from '@toolvisor/process-output'
export { endOf, newestBytes } from '@toolvisor/process-output'
export type { Account } from '@toolvisor/run-as'
export { setprivRunAs } from '@toolvisor/run-as'
export type { KeptRecord, SpillAllowance, SpillCut } from '@toolvisor/run-state'
export { spillCutText, trustStateDir } from '@toolvisor/run-state'
export { type AsciicastOptions, AsciicastRecorder } from './asciicast.js'
export type { EnvdirVariables } from './internal/envdir.js'
export type { EnvdirPermissions } from './internal/envdir-root.js'
export type { EffectivePolicy, EnvironmentPolicy } from './internal/environment.js'
export { CORE_VARIABLES, DEFAULT_EXCLUDES, inherited } from './internal/environment.js'
export { builtExecHelper, nativeProblem } from './internal/exec-helper.js'
export type { AppliedLimits, LimitsPolicy } from './internal/limits.js'
export { HOUSE_LIMITS, show as showLimit } from './internal/limits.js'
export type { OwnPathOption } from './internal/own-paths.js'
export { installation } from './internal/own-paths.js'
export type { PlainProcessSpec } from './internal/plain.js'
export { signalGroup } from './internal/process-util.js'
export type { ExtraStream } from './internal/spawn.js'
export { assemble, openFailure, pinFailure, spawnLaunch, typeFailure, wireExtras } from './internal/spawn.js'
export type { StartedWith } from './internal/started-with.js'
export { defaultStateDir, EnvironmentPolicyConfig, RuntimeConfig, runtimePlugin } from './plugin.js'
export { RAW_ONESHOT, Runtime } from './runtime.js'
export type {
  CgroupPlacement,
  Child,
  Keeping,
  KeptChildHandle,
  KeptLaunch,
  Spawned,
  Spawner,
  SpawnerFacts,
  SpawnOptions,
  WarmAnswer,
  WarmPlan,
} from './spawner.js'
export { nodeSpawner } from './spawner.js'
export { KeepingToken, RuntimeToken, spawnerToken } from './tokens.js'
export type {
  Annotation,
  ContainmentFacts,
  EndReason,
  LaunchFacts,
  Lifecycle,
  LimitHit,
  LostProcess,
  ManagedProcess,
  NetworkOptions,
  NetworkSetup,
  PreparedTool,
  PrepareInput,
  ProcessExit,
  ProcessRuntime,
  ProcessTerminal,
  ResolvedRuntimeOptions,
  RunContext,
  RuntimeOptions,
  StartOptions,
  UndefaultedRuntimeOption,
} from './types.js'
