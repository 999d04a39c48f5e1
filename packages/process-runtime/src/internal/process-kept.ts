import { dirname } from 'node:path'
import type { Readable } from 'node:stream'
import type { Containment } from '@toolvisor/containment'
import type { Launch, Placeholder } from '@toolvisor/launchers'
import { RuntimeError, removePlaceholder } from '@toolvisor/launchers'
import { handedOver, type KeptRecord, type RunState, recordKept } from '@toolvisor/run-state'
import type { Child, Keeping, KeptChildHandle, KeptLaunch } from '../spawner.js'
import type { StartOptions } from '../types.js'
import type { AppliedLimits } from './limits.js'
import type { Launched, ProcessHost } from './process-launch.js'
import { ProcessTree } from './process-tree.js'
import type { Spawned } from './spawn.js'

/**
 * Kept processes (issue 33, decision 0113): a launch wrapped in the runtime's keeper, its record
 * in the keeper's directory, and a kept process of an earlier runtime taken over.
 */

/** Records a kept launch (or adoption) in its keeper's directory; false: it has no keeper after all. */
export function recordLaunch(
  state: RunState,
  {
    process,
    child,
    launched,
    start,
  }: { process: KeptLaunched['process']; child: Child; launched: Launched; start: StartOptions },
): boolean {
  const { kept, tree } = launched
  if (kept?.keeper === undefined || child.pid === undefined) return false
  const started = {
    argv: start.argv,
    ...(start.cwd ? { cwd: start.cwd } : {}),
    ...(kept.placeholders ? { placeholders: kept.placeholders } : {}),
  }
  const { dir, keeper, record } = kept
  keepRecorded(state, {
    process,
    dir,
    keeper,
    pid: child.pid,
    record,
    started,
    contained: tree !== undefined,
  })
  return true
}

/** A kept launch's keeper (`Launched.kept`): its directory and pid, the record it was adopted from. */
export interface KeptInfo {
  readonly dir: string
  readonly keeper: number | undefined
  readonly record?: KeptRecord
  /** What its launch left on the host, for its record (a later runtime that re-adopts it removes them). */
  readonly placeholders?: readonly Placeholder[]
}

/** What `keepRecorded` records of a kept process launched (or adopted, with its earlier `record`). */
export interface KeptLaunched {
  readonly process: {
    readonly id: string
    readonly tool: string
    readonly startedAt: Date
    readonly resumedAt?: Date | undefined
  }
  readonly dir: string
  readonly keeper: number
  readonly pid: number
  readonly record?: KeptRecord | undefined
  readonly started: {
    readonly argv: readonly string[]
    readonly cwd?: string
    readonly placeholders?: readonly Placeholder[]
  }
  /** It has a cgroup tree of its own (this launch's). */
  readonly contained: boolean
}

/** A kept process of an earlier runtime, taken over from its keeper (`Runtime.adopt`). */
export interface Adopted {
  /** Its keeper's side, once it answered; rejects when it does not (the process is lost). */
  readonly child: Promise<KeptChildHandle>
  readonly tree?: ProcessTree
  readonly record: KeptRecord
  /** Holds what its launch left on the host again (its mechanism's count); returns the release. */
  readonly holdPlaceholders: (placeholders: readonly Placeholder[]) => () => void
  /** Records them in this run's log (once the adoption is logged as a launch). */
  readonly held: (placeholders: readonly Placeholder[]) => void
}

/** What of the runtime an adoption needs: its keeping and run, the id it gives, its cgroups and the limits. */
export interface AdoptingHost {
  readonly keeping: Keeping
  readonly state: RunState
  readonly id: string
  readonly containment: Containment | undefined
  readonly limits: AppliedLimits
}

/** What `Runtime.adopt` hands the process that takes `record` over. */
export function adopting(
  { keeping, state, id, containment, limits }: AdoptingHost,
  record: KeptRecord,
  start: StartOptions,
): Adopted {
  // Its cgroup, where it still is: a tree of this runtime's from now on.
  const cgroup = record.cgroup && containment?.existing(record.cgroup.run, record.cgroup.leaf)
  const tree = cgroup ? new ProcessTree(cgroup, limits) : undefined
  const mechanism = start.tool.sandbox?.mechanism
  return {
    child: keeping.adopt(record.dir),
    record,
    ...(tree ? { tree } : {}),
    held: (placeholders) => state.holding(id, placeholders),
    // A mechanism that counts them holds them with its own launches'; else they go at the end.
    holdPlaceholders: (placeholders) =>
      mechanism?.holdPlaceholders?.(placeholders) ??
      (() => {
        for (const placeholder of placeholders) removePlaceholder(placeholder)
      }),
  }
}

/** An adopted process as a launch (`Launched`) to wire, once its keeper answered. */
export async function adoptedLaunch({
  child,
  tree,
  record,
  holdPlaceholders,
  held,
}: Adopted): Promise<Launched> {
  const placeholders = record.placeholders ?? []
  const answered = await child.catch((error: unknown) => {
    // Nothing of it is this runtime's: what its cgroup still holds goes (the tree's end kills it),
    // and what its launch left on the host with it.
    void tree?.end()
    if (placeholders.length > 0) holdPlaceholders(placeholders)()
    throw new RuntimeError('RUNTIME_ERR_SPAWN_FAILED', `lost: ${(error as Error).message}`)
  })
  // What its launch left on the host is this runtime's to remove at its end (in its log: should it die first, its reap does).
  const release = placeholders.length > 0 ? holdPlaceholders(placeholders) : undefined
  if (placeholders.length > 0) held(placeholders)
  return {
    child: answered,
    ...(tree ? { tree } : {}),
    ...(release ? { release } : {}),
    kept: { dir: record.dir, keeper: record.keeper, record },
  }
}

/** The runtime's keeping, or why nothing can be kept. */
export function keeperOf(options: ProcessHost['options'], what = 'a kept process'): Keeping {
  if (options.keeping === undefined)
    throw new RuntimeError(
      'RUNTIME_ERR_SPAWN_FAILED',
      `cannot keep ${what}: no keeper is composed (the runtime's keeping option)`,
    )
  return options.keeping
}

/** The launch wrapped in a keeper, or why it cannot be kept. */
export function keptLaunch(
  host: Pick<ProcessHost, 'options'>,
  launch: Launch,
  start: StartOptions,
): KeptLaunch {
  return keeperOf(host.options, start.tool.name).wrap(launch)
}

/** The keeper's child in place of the spawned keeper (the launch's other pipes as they were: the keeper passes them on). */
export async function keptSpawned(kept: KeptLaunch, spawned: Spawned): Promise<Spawned> {
  const child = await kept.attach(
    spawned.child.stdout as Readable | null,
    spawned.child.stderr as Readable | null,
  )
  return { child, pipes: spawned.pipes }
}

/**
 * Writes a kept process's record into its keeper's directory: this run's id for it from now on,
 * its cgroup leaf where it was made (with a tree: this launch's; adopted: where it always was), and
 * the annotations an adopted one had, in this run's log too.
 */
export function keepRecorded(state: RunState, kept: KeptLaunched): void {
  const { process, dir, keeper, pid, record, started, contained } = kept
  const run = state.runId
  const cgroup = record ? record.cgroup : contained ? { run, leaf: process.id } : undefined
  const resumedAt =
    record && process.resumedAt ? [...(record.resumedAt ?? []), process.resumedAt.toISOString()] : undefined
  recordKept({
    ...record,
    ...started,
    dir,
    run,
    id: process.id,
    tool: process.tool,
    pid,
    keeper,
    startedAt: process.startedAt.toISOString(),
    ...(cgroup ? { cgroup } : {}),
    ...(resumedAt ? { resumedAt } : {}),
  })
  if (record === undefined) return
  // The run that launched it lists it no more: a later start must not report it lost there.
  handedOver(dirname(dirname(state.dir)), record.run, record.id)
  const { task, session, kind } = record
  const info = { ...(task ? { task } : {}), ...(session ? { session } : {}), ...(kind ? { kind } : {}) }
  if (Object.keys(info).length > 0) state.annotate(process.id, info)
}

/**
 * Which task (of which kind) and session a process belongs to, for restart reports; `mail`: the
 * durable name of its mail source, kept with a kept process only (decision 0113).
 */
export interface Annotation {
  readonly task?: string
  readonly session?: string
  readonly kind?: string
  readonly mail?: string
  /** Each reader's event and byte cursors in its task (`@toolvisor/tasks`), kept with a kept process only. */
  readonly cursors?: Readonly<Record<string, number>>
  readonly byteCursors?: Readonly<Record<string, readonly [number, number]>>
  /** What its kind's handler needs to take it back (the bash tools: the mode, workspace, names, command). */
  readonly handler?: Readonly<Record<string, unknown>>
}
