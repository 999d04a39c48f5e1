import type { CgroupHost, CgroupLimits, Containment, Tree } from '@toolvisor/containment'
import type { Launchers } from '@toolvisor/launchers'
import { protectedPaths, RuntimeError } from '@toolvisor/launchers'
import {
  DiskBudget,
  type KeptRecord,
  keptAlive,
  keptLost,
  markTold,
  RunState,
  type SpillLedger,
  Sweeper,
  updateKept,
} from '@toolvisor/run-state'
import { confineTool } from './internal/confine.js'
import { EnvdirRootGuard } from './internal/envdir-root.js'
import { builtExecHelper, execHelperStatus } from './internal/exec-helper.js'
import { launchFactsOf } from './internal/launch-facts.js'
import { type AppliedLimits, applyLimits } from './internal/limits.js'
import { ownPathsOf } from './internal/own-paths.js'
import { type PlainProcessSpec, plainInput } from './internal/plain.js'
import { type PrepareContext, prepareTool } from './internal/prepare.js'
import { ToolProcess } from './internal/process.js'
import { adopting, keeperOf, recordLaunch } from './internal/process-kept.js'
import type { ProcessHost } from './internal/process-launch.js'
import { RAW_ONESHOT } from './internal/raw.js'
import { Retention } from './internal/retention.js'
import { containmentOf, runLives } from './internal/runtime-cgroups.js'
import { RUNTIME_DEFAULTS } from './options.js'
import { type KeptChildHandle, nodeSpawner } from './spawner.js'
import type {
  Annotation,
  LaunchFacts,
  LostProcess,
  ManagedProcess,
  PreparedTool,
  PrepareInput,
  ProcessRuntime,
  RuntimeOptions,
  StartOptions,
} from './types.js'

export { RAW_ONESHOT, RUNTIME_DEFAULTS }

/**
 * The process runtime (see `ProcessRuntime`). `runtimePlugin` creates it (a host may call
 * `new Runtime(options, launchers)`); `dispose()` stops every process still running with its
 * declared cancel.
 */
export class Runtime implements ProcessRuntime, AsyncDisposable {
  readonly options: ProcessRuntime['options']
  readonly #state: RunState
  readonly #running = new Set<ToolProcess>()
  /** The keepers' side of its kept processes (decision 0113). */
  readonly #kept = new Map<ToolProcess, KeptChildHandle>()
  /** What annotated each running process (for its keeper's record, written once it runs). */
  readonly #notes = new Map<string, Annotation>()
  readonly #retention: Retention
  readonly #sweeper: Sweeper
  readonly #disk: DiskBudget
  readonly #host: ProcessHost
  readonly #context: PrepareContext
  readonly #containment: Containment | undefined
  readonly #defaultLimits: AppliedLimits
  readonly #warnings: string[] = []
  /** The disk budget's account of each process not finished yet (handed to the budget at its end). */
  readonly #ledgers = new Map<string, SpillLedger>()
  #counter = 0
  #disposed = false

  constructor(options: RuntimeOptions, launchers: Launchers) {
    this.options = { ...RUNTIME_DEFAULTS, ...stripUndefined(options) } as ProcessRuntime['options']
    const warn = (line: string) => this.#warnings.push(line)
    const { cgroup, orphanGraceMs, envdirRoot: root, envdirPermissions: permissions } = this.options
    const envdirRoot = new EnvdirRootGuard({ root, permissions, warn })
    const refused = envdirRoot.refusal()
    if (refused !== undefined) throw new RuntimeError('RUNTIME_ERR_ENVDIR_PERMISSIONS', refused)
    this.#state = RunState.open(options.stateDir, this.options.retentionMs)
    const execHelper = execHelperStatus(options.execHelper ?? builtExecHelper)
    const spawner = options.spawner ?? nodeSpawner
    const server = () => spawner.placement?.()
    const next = () => [processId(this.#counter + 1), this.#defaultLimits.cgroup] as const
    const contained = containmentOf(
      cgroup,
      this.#state,
      { server, next },
      { graceMs: orphanGraceMs, stateDir: this.options.stateDir },
      warn,
    )
    this.#containment = typeof contained === 'string' ? undefined : contained
    const cgroups: CgroupHost =
      typeof contained === 'string' ? { available: false, reason: contained } : contained.host
    this.#context = {
      limitFacts: { cgroups, placed: spawner.placement !== undefined && spawner.facts.available },
      options: this.options,
      launchers,
      execHelper,
      envdirRoot,
      own: ownPathsOf(this.options),
      protect: protectedPaths(this.options.protectedPaths),
    }
    this.#defaultLimits = applyLimits(
      undefined,
      this.options.limits ?? {},
      this.#context.limitFacts,
      (code, field, reason) => {
        throw new RuntimeError(code, `${field}: ${reason}`)
      },
    )
    this.#retention = new Retention(this.options.retainBytes)
    this.#sweeper = new Sweeper(this.#state.runId)
    this.#disk = new DiskBudget({
      stateDir: this.options.stateDir,
      ownRun: this.#state.runId,
      budget: this.options.stateBytes,
    })
    this.#host = {
      options: this.options,
      state: this.#state,
      spillLedger: (id) => this.#spillLedger(id),
      execHelper: execHelper.available ? execHelper.path : undefined,
      spawner,
      tree: (id, limits) => this.#tree(id, limits),
      defaultLimits: this.#defaultLimits,
      finished: (process) => this.#finished(process),
      sweep: (process, urgency) => this.#sweeper.sweep(process.id, process.pid, urgency),
      keeps: (process, child, launched, start) => this.#keeps(process, { child, launched, start }),
    }
    this.#containment?.ahead()
  }

  /** Records a kept launch (or adoption) and holds its keeper's side; false: it has no keeper after all. */
  #keeps(
    process: ToolProcess,
    { child, launched, start }: Omit<Parameters<typeof recordLaunch>[1], 'process'>,
  ): boolean {
    const kept = recordLaunch(this.#state, { process, child, launched, start })
    if (!kept) return false
    this.#kept.set(process, child as KeptChildHandle)
    // What annotated it while it launched reaches its keeper's record too.
    const noted = this.#notes.get(process.id)
    if (noted) updateKept((child as KeptChildHandle).dir, noted)
    return true
  }

  /** The launch's cgroup tree, and the next launch's made ahead, once this one is under way. */
  #tree(id: string, limits: CgroupLimits): Promise<Tree> | undefined {
    return this.#containment?.tree(id, limits)
  }

  #spillLedger(id: string): SpillLedger {
    const ledger = this.#disk.ledger()
    this.#ledgers.set(id, ledger)
    return ledger
  }

  #finished(process: ToolProcess): void {
    this.#running.delete(process)
    this.#kept.delete(process)
    this.#notes.delete(process.id)
    // Held weakly: the output and its process (through its callbacks) hold each other, and go together.
    this.#retention.add(process.output)
    // Nothing the budget keeps may hold the process: it would never see it collected.
    const { spill } = this.#state
    const id = process.id
    const ledger = this.#ledgers.get(id)
    this.#ledgers.delete(id)
    const remove = () => {
      for (const stream of ['stdout', 'stderr', 'cast']) spill.file(`${id}.${stream}`).remove()
    }
    if (ledger !== undefined) this.#disk.finished(process, { ledger, remove })
  }

  /** This instance's run id: the prefix of the `TOOLVISOR_PROCESS` marker of every process it starts. */
  get runId(): string {
    return this.#state.runId
  }

  prepare(input: PrepareInput): Promise<PreparedTool> {
    return prepareTool(input, this.#context, 'tool')
  }

  preparePlain(spec: PlainProcessSpec): Promise<PreparedTool> {
    return prepareTool(plainInput(spec), this.#context, 'operator')
  }

  confined(path: string): Promise<PreparedTool> {
    return confineTool(path, this.#context)
  }

  launchFacts(): LaunchFacts {
    const { execHelper, limitFacts } = this.#context
    const facts = { execHelper, forkServer: this.#host.spawner.facts, state: this.#disk.usage() }
    return launchFactsOf(this.options, facts, { cgroups: limitFacts.cgroups, limits: this.#defaultLimits })
  }

  start(options: StartOptions): ManagedProcess {
    if (this.#disposed)
      throw new RuntimeError('RUNTIME_ERR_DISPOSED', 'the runtime is disposed: it starts nothing more')
    const process = new ToolProcess(this.#host, processId(++this.#counter), options)
    this.#running.add(process)
    // A process that failed to spawn is already finished.
    if (process.lifecycle.status === 'failed') this.#running.delete(process)
    return process
  }

  lost(): readonly LostProcess[] {
    return this.#state.lost
  }

  warnings(): readonly string[] {
    return this.#warnings
  }

  keptLost(): readonly LostProcess[] {
    return keptLost(this.options.stateDir)
  }

  markTold(lost: Pick<LostProcess, 'run' | 'id'>): void {
    markTold(this.options.stateDir, lost)
  }

  annotate(id: string, annotation: Annotation): void {
    const { mail: _m, cursors: _c, byteCursors: _b, handler: _h, ...info } = annotation
    if (Object.keys(info).length > 0) this.#state.annotate(id, info)
    // A kept process's keeper keeps it all, for the runtime that re-adopts it (decision 0113).
    if (![...this.#running].some((process) => process.id === id)) return
    const kept = { ...this.#notes.get(id), ...annotation }
    this.#notes.set(id, kept)
    for (const [process, child] of this.#kept) if (process.id === id) updateKept(child.dir, kept)
  }

  waiting(tool: string, info: Pick<Annotation, 'task' | 'session' | 'kind'>): () => void {
    return this.#state.waiting(tool, info)
  }

  /**
   * The kept processes of this state directory that an earlier runtime left (decision 0113): their
   * keeper lives and no live runtime holds them. Each is this runtime's to `adopt`.
   */
  kept(): KeptRecord[] {
    return keptAlive(this.options.stateDir).filter((record) => !runLives(record.run))
  }

  /**
   * Takes over a kept process an earlier runtime left (`kept()`): a new id here, its keeper's
   * output from the first byte (so its ring and spill are whole again), its stdin, its exit, its
   * cgroup where it still is, `resumedAt` set. `start` is what it was started with (its tool
   * prepared again, its argv, `stdin: 'open'` to write to it). When its keeper does not answer it
   * fails at its launch (`launched`), `lost`.
   */
  adopt(record: KeptRecord, start: StartOptions): ManagedProcess {
    if (this.#disposed)
      throw new RuntimeError('RUNTIME_ERR_DISPOSED', 'the runtime is disposed: it adopts nothing more')
    const id = processId(++this.#counter)
    const keeping = keeperOf(this.options, 'a process an earlier runtime kept')
    const limits = start.tool.limits ?? this.#defaultLimits
    const host = { keeping, state: this.#state, id, containment: this.#containment, limits }
    const process = new ToolProcess(this.#host, id, start, adopting(host, record, start))
    this.#running.add(process)
    return process
  }

  /**
   * Stops every process and lets go of the run. With `keep`, a kept process (`StartOptions.keep`) is
   * not stopped but detached: it runs on, held by its keeper, for the next runtime on this state
   * directory (decision 0113).
   */
  async dispose(options: { readonly keep?: boolean } = {}): Promise<void> {
    if (this.#disposed) return
    this.#disposed = true
    const running = [...this.#running]
    // With a keeper composed, what it keeps runs on unless told otherwise.
    const keep = options.keep ?? this.options.keeping !== undefined
    const kept = keep ? running.filter((process) => this.#kept.has(process)) : []
    for (const process of kept) {
      process.abandon()
      this.#kept.get(process)?.detach()
    }
    const stopped = running.filter((process) => !kept.includes(process))
    await Promise.all(stopped.map((process) => process.stop({ reason: 'runtime-disposed' })))
    await this.#sweeper.idle()
    await this.#containment?.release()
    this.#containment?.close()
    this.#state.close({ kept: kept.length > 0 })
    this.#state.removeIfEmpty({ kept: kept.length > 0 })
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.dispose()
  }
}

/** The id of this instance's `n`th process (its cgroup leaf is named so too). */
const processId = (n: number) => `proc-${n}`

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>
}
