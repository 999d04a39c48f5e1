import type { NetworkGates } from '@toolvisor/launchers'
import type { EnvdirPermissions } from './internal/envdir-root.js'
import type { EnvironmentPolicy } from './internal/environment.js'
import type { LimitsPolicy } from './internal/limits.js'
import type { OwnPathOption } from './internal/own-paths.js'
import { DEFAULT_SANDBOX_USER } from './internal/prepare.js'
import type { Keeping, Spawner } from './spawner.js'

/** `RuntimeOptions.network`: what enforces a network allow list, and the operator's bounds on tools. */
export interface NetworkOptions {
  /** What opens a launch's gate to the network (`@toolvisor/network`'s `networkGates()`). Absent: a tool that declares an allow list does not load. */
  readonly gates?: NetworkGates
  /**
   * toolvisor.json `network.allow`: the names a tool's allow list may name, each of its entries
   * within one of these (`*.github.com` covers `api.github.com`). Absent: whatever the tool
   * declares. The operator's own processes (the bash tools) are not bounded by it.
   */
  readonly ceiling?: readonly string[]
  /** toolvisor.json `network.host`: whether a tool may declare `net: host`. Default true. */
  readonly host?: boolean
  /** toolvisor.json `network.force`: `none` refuses every tool that declares any network (`host` or an allow list). */
  readonly force?: 'none'
}

/** Operator options of the runtime. */
export interface RuntimeOptions {
  /** Where run records and spill files live (created if missing). */
  readonly stateDir: string
  /** `--envdir-root`: where `runtime.envdir` subdirectories are looked up. */
  readonly envdirRoot?: string
  /** `--sandbox`: `bwrap`, `landlock`, `auto`, or a third-party mechanism's name. */
  readonly sandbox?: string
  /** `--run-as`: the run_as mechanism's name (`setpriv`, `runuser`). */
  readonly runAs?: string
  /**
   * `--run-as-allow`: the users a tool's own `run_as` may name (decision 0092); `*` is any user
   * but root, which is allowed only when listed by its name. Default none: a tool that declares
   * run_as does not load. The operator's own processes (`preparePlain`) are not subject to it.
   */
  readonly runAsAllow?: readonly string[]
  /**
   * `--sandbox-user`: who a sandboxed tool runs as when toolvisor runs as root and the tool does
   * not declare run_as (never host root unless the declaration asks for it). Default `nobody`.
   */
  readonly sandboxUser?: string
  /** Which of the runtime's own variables tools inherit (per toolbox, `PrepareInput.environment` overrides it). */
  readonly environment?: EnvironmentPolicy
  /** The final-exec helper to run (default: the one this package's build compiled). */
  readonly execHelper?: string
  /**
   * What launches are spawned through (decision 0107): default Node's own spawn, from this process,
   * without a cgroup per launch; `@toolvisor/launch-native`'s `nativeSpawner()` forks them from a
   * small fork server that places each in its cgroups before its exec.
   */
  readonly spawner?: Spawner
  /**
   * What keeps a start with `keep: true` alive past this runtime (decision 0113): `@toolvisor/keeper`'s
   * `Keepers` over `<stateDir>/keep`. Without it `keep` is refused.
   */
  readonly keeping?: Keeping
  /**
   * Where every launch gets its own cgroup (decision 0097): a v2 directory delegated to toolvisor
   * (`/sys/fs/cgroup/toolvisor.slice/...`), or, by default, `toolvisor` below this process's own
   * v2 cgroup (with the controllers a hybrid host has in v1 taken from there); `false`: none, and
   * a tool's leftovers are found by its marker only.
   */
  readonly cgroup?: string | false
  /**
   * How old the cgroups of a dead runtime with no record in this state directory must be before
   * this one kills what they hold (another state directory's next start reports them; a younger
   * run is left to it). Default 60 s.
   */
  readonly orphanGraceMs?: number
  /** Limits a launch gets and the most a tool may declare (decision 0097). Default `HOUSE_LIMITS`, ceilings the defaults. */
  readonly limits?: LimitsPolicy
  /** The network by name (issue 32, decision 0111): the gates allow lists run through, and the operator's bounds. */
  readonly network?: NetworkOptions
  /** Output events kept per process (ruling 16). Default 256. */
  readonly ringEvents?: number
  /** The most stdout bytes the events of a process's ring may stand for; older ones are read back from the spill file. Default 4 MiB. */
  readonly ringBytes?: number
  /** Memory (rings, heads) finished processes may hold together; past it the oldest move to their spill files. Default 64 MiB. */
  readonly retainBytes?: number
  /** stderr lines kept per process. Default 256. */
  readonly ringStderrLines?: number
  /** Bytes of stdout and of stderr kept in memory for results; the rest spills. Default 256 KiB. */
  readonly resultBytes?: number
  /** Longest stdout line kept whole. Default 1 MiB. */
  readonly maxLineBytes?: number
  /** Bytes kept of the end of each stream for error reports. Default 8 KiB. */
  readonly tailBytes?: number
  /** How long a previous run's spill files are kept. Default 24 h. */
  readonly retentionMs?: number
  /** The bound of a one-shot run whose caller gives none (a tool that never exits). Default 10 min. */
  readonly oneshotTimeoutMs?: number
  /**
   * The disk budget of the state directory (spill files, run records). Live spills count: once
   * it is spent (and nothing is left to prune), a stream's spill is cut. Default 1 GiB.
   */
  readonly stateBytes?: number
  /**
   * The most bytes one stream's spill file keeps: its first ones; past them the spill is cut, the
   * newest bytes stay in memory (`tailBytes`), and results say how much was not kept. Default
   * 256 MiB (a quarter of the default `stateBytes`).
   */
  readonly spillBytes?: number
  /**
   * `--envdir-permissions`: an envdir root that group or others may read or write is refused at
   * start (`refuse`, the default), or accepted with a warning (`warn`, in `warnings()`).
   */
  readonly envdirPermissions?: EnvdirPermissions
  /**
   * The host's own paths no sandbox may reach, beside the state directory, the envdir root and the
   * installation, which the runtime adds itself: a token file kept elsewhere, the socket it
   * listens on, its configuration file (decision 0095).
   */
  readonly ownPaths?: readonly OwnPathOption[]
  /**
   * More paths kept read-only inside every writable grant, beside `PROTECTED_PATHS` (relative to
   * the grant; a directory ends in `/`): decision 0096.
   */
  readonly protectedPaths?: readonly string[]
}

const KiB = 1024

/** The defaults of every operator option (rings and results: ruling 16 of the protocol reference; each option's own doc says why). */
export const RUNTIME_DEFAULTS = {
  ringEvents: 256,
  ringBytes: 4 * 1024 * KiB,
  retainBytes: 64 * 1024 * KiB,
  ringStderrLines: 256,
  resultBytes: 256 * KiB,
  maxLineBytes: 1024 * KiB,
  tailBytes: 8 * KiB,
  retentionMs: 24 * 60 * 60 * 1000,
  sandboxUser: DEFAULT_SANDBOX_USER,
  oneshotTimeoutMs: 10 * 60 * 1000,
  stateBytes: 1024 * 1024 * KiB,
  spillBytes: 256 * 1024 * KiB,
  envdirPermissions: 'refuse',
  runAsAllow: [] as readonly string[],
  orphanGraceMs: 60_000,
} as const
