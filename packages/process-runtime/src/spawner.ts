import type { Readable, Writable } from 'node:stream'
import type { CgroupPlacement } from '@toolvisor/containment'
import type { Launch, TerminalSize } from '@toolvisor/launchers'
import type { SpillStages } from '@toolvisor/process-output'
import { type Spawned, spawnLaunch } from './internal/spawn.js'

export type { CgroupPlacement, WarmAnswer, WarmPlan } from '@toolvisor/containment'
export type { SpillStages } from '@toolvisor/process-output'
export type { Spawned }

/**
 * The seam a launch is spawned through (decision 0107). The runtime builds the launch (its
 * environment, the final exec stage, the mechanisms' wrapping, its cgroups and rlimits) and hands
 * it to a `Spawner`; Node's own spawn (`nodeSpawner`) is the default. A spawner that can put a child
 * in its cgroups and set its rlimits before its exec says so by having `placement`
 * (`@toolvisor/launch-native`'s fork server): only then does the runtime give each launch a cgroup.
 */
export interface Spawner {
  /** Where launches are forked from, for operators (`LaunchFacts.forkServer`). */
  readonly facts: SpawnerFacts
  /**
   * Spawns a launch in its own process group, its pid known once the promise resolves; rejects
   * with a `RuntimeError` (or the spawn's own error) when nothing was started.
   */
  launch(launch: Launch, options?: SpawnOptions): Promise<Spawned>
  /**
   * What makes and removes the cgroup trees made ahead, off the event loop, when this spawner
   * places each child in its cgroups (and sets its rlimits) before its exec; undefined when it
   * cannot just now (the trees are made by the runtime then).
   */
  readonly placement?: () => CgroupPlacement | undefined
  /** Spill writes past the page cache for a bulk stream's spill file open as `fd`; undefined: plain writes. */
  readonly spillStages?: (fd: number) => SpillStages | undefined
}

/**
 * What keeps a launch alive past the runtime (issue 33, decision 0113): `@toolvisor/keeper`'s
 * `Keepers`. A kept launch is wrapped, outermost, in a keeper that holds its stdio and its exit,
 * so its parent is not the runtime; the runtime reaches it through the keeper (`attach`), and a
 * later runtime through the same keeper once this one is gone.
 */
export interface Keeping {
  /** Wraps `launch` in a keeper with a directory of its own; throws when it cannot be kept. */
  wrap(launch: Launch): KeptLaunch
  /** Connects to the keeper in `dir` (a kept process an earlier runtime left); rejects when none answers there. */
  adopt(dir: string): Promise<KeptChildHandle>
}

/** A launch wrapped in its keeper. */
export interface KeptLaunch {
  readonly launch: Launch
  /** The keeper's directory (`<stateDir>/keep/<key>`). */
  readonly dir: string
  /** Once the wrapped launch was spawned: waits for its keeper's word on its stdio, then connects. */
  attach(stdout: Readable | null, stderr: Readable | null): Promise<KeptChildHandle>
}

/** A kept process as a child: and `detach`, which lets it go on without this runtime. */
export interface KeptChildHandle extends Child {
  /** Its keeper's directory. */
  readonly dir: string
  /** Its keeper's pid. */
  readonly keeper: number | undefined
  detach(): void
}

/** Where launches are forked from: a fork server, or (and why) this process. */
export type SpawnerFacts =
  | { readonly available: true; readonly path: string }
  | { readonly available: false; readonly reason: string }

/** Options of one `Spawner.launch`. */
export interface SpawnOptions {
  /** Its stdout is read into slabs (decision 0083: bulk binary output). */
  readonly stdoutInSlabs?: boolean
  /** What errors name it by (the tool's path; default the launch's file). */
  readonly tool?: string
  /**
   * All of its stdin, closed right after: Node's spawn gives it as a file (see `node-pipes.ts`); a
   * spawner with real pipes ignores it (the runtime writes it to the child's stdin).
   */
  readonly stdinFile?: Uint8Array
}

/** A spawned child as the runtime uses it: what Node's `ChildProcess` gives, and a served child too. */
export interface Child {
  readonly pid?: number | undefined
  readonly stdin: Writable | null
  readonly stdout: Readable | null
  readonly stderr: Readable | null
  /** Resizes its terminal, when it was launched on one (`Launch.terminal`). */
  resize?(size: TerminalSize): void
  on(event: 'error', listener: (error: Error) => void): this
  once(event: 'close', listener: () => void): this
  /** `why`: set when the runtime itself killed the process for a reason of its own (served children). */
  once(
    event: 'exit',
    listener: (code: number | null, signal: NodeJS.Signals | null, why?: string) => void,
  ): this
}

/** Node's own spawn: a launch forked from this process, FIFOs for its stdio, no cgroup placement. */
export const nodeSpawner: Spawner = {
  facts: {
    available: false,
    reason: 'no fork server: @toolvisor/launch-native is not composed',
  },
  launch: async (launch, options = {}) => spawnLaunch(launch, options.stdinFile),
}
