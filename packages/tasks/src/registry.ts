import type { LostProcess, ManagedProcess, ProcessExit, ProcessRuntime } from '@toolvisor/process-runtime'
import { bytesOf, type Entry, entryOf, info, keptCursors, lostEntry, pageOf, waitEnd, wake } from './entry.js'
import { TasksError } from './errors.js'
import { TaskIds } from './internal/ids.js'
import { TaskSignals } from './internal/signals.js'
import type {
  AddTaskOptions,
  TaskBytes,
  TaskCompletion,
  TaskInfo,
  TaskKind,
  TaskNews,
  TaskRead,
  TaskRegistry,
} from './types.js'

/**
 * The ownership refusal, seed 001's stable text `task <id> belongs to another session`: built here
 * only, and thrown by every tool that fences something by its owner session.
 */
export function foreignTask(id: string): TasksError {
  return new TasksError('TASKS_ERR_FOREIGN_TASK', `task ${id} belongs to another session`)
}

const DEFAULT_READ = 100
const KEEP_ENDED = 1000

/**
 * Creates the task registry over a runtime. Tasks a previous run left running are `failed: lost on
 * restart`, of their kind, owned by the session that had them (visible to it alone); what no
 * session owned is the operator's (`runtime.lost()`). New ids go past the lost tasks' ids.
 */
export function createTaskRegistry(runtime: RegistryRuntime): TaskRegistry {
  return new Tasks(runtime)
}

/** What the registry needs of a runtime (lost tasks are told of only when it can record that). */
export type RegistryRuntime = Pick<ProcessRuntime, 'lost' | 'annotate'> &
  Partial<Pick<ProcessRuntime, 'keptLost' | 'markTold'>>

class Tasks implements TaskRegistry {
  readonly #runtime: RegistryRuntime
  readonly #entries = new Map<string, Entry>()
  readonly #signals = new TaskSignals()
  readonly #ended: string[] = []
  readonly #ids = new TaskIds()

  constructor(runtime: RegistryRuntime) {
    this.#runtime = runtime
    // What the state directory keeps: lost tasks found at this start or an earlier one, each
    // shown to its owner only, for as long as its run's record is kept.
    const seen = new Set<string>()
    for (const lost of [...(runtime.keptLost?.() ?? []), ...runtime.lost()]) {
      const key = `${lost.run}/${lost.id}`
      if (seen.has(key)) continue
      seen.add(key)
      this.#addLost(lost)
    }
  }

  add(options: AddTaskOptions): TaskInfo {
    const id = this.#claim(options.id, options.owner, 'start' in options ? options.idPrefix : undefined)
    const deferred = 'start' in options && options.deferred === true
    const process = deferred ? undefined : 'start' in options ? options.start() : options.process
    const entry = entryOf(id, options, process)
    this.#entries.set(id, entry)
    if (process !== undefined) this.#attach(entry, process)
    return info(entry)
  }

  begin(id: string): TaskInfo | undefined {
    const entry = this.#entries.get(id)
    const start = entry?.pending
    if (entry === undefined || start === undefined) return undefined
    entry.pending = undefined
    const process = start()
    entry.process = process
    entry.startedAt = process.startedAt
    this.#attach(entry, process)
    wake(entry)
    return info(entry)
  }

  /** A task's process is its: annotated (a crash then reports it lost), its exit the task's end. */
  #attach(entry: Entry, process: ManagedProcess): void {
    this.#runtime.annotate(process.id, {
      task: entry.id,
      kind: entry.kind,
      ...(entry.owner ? { session: entry.owner } : {}),
    })
    void process.exit.then((exit) => this.#finish(entry, exit))
  }

  get(id: string, session: string | undefined): TaskInfo {
    return info(this.#owned(id, session))
  }

  process(id: string, session: string | undefined): ManagedProcess {
    const entry = this.#owned(id, session)
    if (entry.process) return entry.process
    if (entry.lostWhy === undefined) {
      const why = entry.exit ? 'it was cancelled before it started' : 'it has not started yet (pending)'
      throw new TasksError('TASKS_ERR_TASK_PENDING', `task ${id} has no process: ${why}`)
    }
    throw new TasksError('TASKS_ERR_TASK_LOST', `task ${id} has no process: ${entry.lostWhy}`)
  }

  list(session: string | undefined): TaskInfo[] {
    return [...this.#entries.values()]
      .filter((entry) => entry.owner === undefined || entry.owner === session)
      .map(info)
  }

  read(
    id: string,
    session: string | undefined,
    options: { readonly reader?: string; readonly max?: number } = {},
  ): TaskRead {
    const entry = this.#owned(id, session)
    const reader = options.reader ?? session ?? ''
    const result = pageOf(entry, entry.cursors.get(reader) ?? 0, options.max ?? DEFAULT_READ)
    entry.cursors.set(reader, result.next)
    this.#keepCursors(entry)
    return result
  }

  readBytes(
    id: string,
    session: string | undefined,
    options: { readonly reader?: string; readonly max: number; readonly utf8?: boolean },
  ): TaskBytes {
    const entry = this.#owned(id, session)
    const bytes = bytesOf(entry, options.reader ?? session ?? '', options)
    this.#keepCursors(entry)
    return bytes
  }

  /** A kept process's keeper keeps its readers' cursors for the daemon that re-adopts it (decision 0113). */
  #keepCursors(entry: Entry): void {
    if (entry.process?.kept) this.#runtime.annotate(entry.process.id, keptCursors(entry))
  }

  page(
    id: string,
    session: string | undefined,
    options: { readonly offset: number; readonly max?: number },
  ): TaskRead {
    return pageOf(this.#owned(id, session), options.offset, options.max ?? DEFAULT_READ)
  }

  async cancel(
    id: string,
    session: string | undefined,
    options: { readonly force?: boolean } = {},
  ): Promise<ProcessExit> {
    const entry = this.#owned(id, session)
    if (entry.pending !== undefined) return this.#cancelPending(entry)
    if (!entry.process) return entry.exit!
    return entry.process.stop({ reason: 'cancelled', ...(options.force ? { force: true } : {}) })
  }

  async wait(id: string, session: string | undefined, ms: number, signal?: AbortSignal): Promise<TaskInfo> {
    const entry = this.#owned(id, session)
    if (entry.exit || (!entry.process && !entry.pending)) return info(entry)
    // The owner's wait returns the end itself: the completion says so (`observed`).
    const owner = session === entry.owner
    if (owner) entry.waiters++
    try {
      await waitEnd(entry, ms, signal)
    } finally {
      if (owner) entry.waiters--
    }
    return info(entry)
  }

  onDone(listener: (completion: TaskCompletion) => void): () => void {
    return this.#signals.onDone(listener)
  }

  all(): TaskInfo[] {
    return [...this.#entries.values()].map(info)
  }

  detach(id: string): void {
    const entry = this.#entries.get(id)
    if (entry === undefined || entry.exit !== undefined || entry.detached) return
    entry.detached = true
    this.#signals.announce({ type: 'detached', task: info(entry) })
  }

  seen(id: string, session: string | undefined): void {
    const entry = this.#entries.get(id)
    // A lost task too: the status that shows its loss is the news its lost mail would bring.
    if (entry?.exit === undefined || entry.seen || entry.owner !== session) return
    entry.seen = true
    this.#signals.announce({ type: 'seen', task: info(entry) })
  }

  onNews(listener: (news: TaskNews) => void): () => void {
    return this.#signals.onNews(listener)
  }

  tellLost(session: string, tell: (task: TaskInfo) => void): void {
    const markTold = this.#runtime.markTold?.bind(this.#runtime)
    if (markTold === undefined) return
    for (const entry of this.#entries.values()) {
      const lost = entry.lost
      if (lost === undefined || lost.told || entry.owner !== session) continue
      const task = info(entry)
      tell(task)
      markTold(lost)
      entry.lost = { ...lost, told: true }
      this.#signals.announce({ type: 'ended', task, observed: false })
    }
  }

  wordLost(kind: TaskKind, words: (task: TaskInfo) => unknown): () => void {
    return this.#signals.wordLost(kind, words)
  }

  lostWords(task: TaskInfo): unknown {
    return this.#signals.lostWords(task)
  }

  /**
   * The id a new task gets: the next `t<n>` nothing holds, or the chosen one when it is free or
   * held by an ended task of the same owner (which is forgotten: a name is reused).
   */
  #claim(chosen: string | undefined, owner: string | undefined, prefix = 't'): string {
    if (chosen === undefined) return this.#ids.next(prefix, (id) => this.#entries.has(id))
    const held = this.#entries.get(chosen)
    if (held === undefined) return chosen
    if (held.exit !== undefined && held.owner === owner) {
      this.#entries.delete(chosen)
      this.#ended.splice(this.#ended.indexOf(chosen), 1)
      return chosen
    }
    const by = held.exit === undefined ? 'a task still running' : "another session's task"
    throw new TasksError(
      'TASKS_ERR_TASK_ID_TAKEN',
      `task id ${chosen} is taken by ${by}; nothing was started`,
    )
  }

  /** The ownership fence: ids are never it (ruling 13); this check is. */
  #owned(id: string, session: string | undefined): Entry {
    const entry = this.#entries.get(id)
    if (!entry) throw new TasksError('TASKS_ERR_UNKNOWN_TASK', `no task ${id}`)
    if (entry.owner !== undefined && entry.owner !== session) throw foreignTask(id)
    return entry
  }

  #finish(entry: Entry, exit: ProcessExit): void {
    entry.exit = exit
    this.#remember(entry)
    this.#signals.completed({ task: info(entry), exit, observed: entry.waiters > 0 })
  }

  /** A pending task cancelled: it ends `cancelled` without ever having had a process. */
  #cancelPending(entry: Entry): ProcessExit {
    entry.pending = undefined
    const exit: ProcessExit = {
      status: 'exited',
      code: null,
      signal: null,
      reason: 'cancelled',
      at: new Date(),
    }
    this.#finish(entry, exit)
    wake(entry)
    return exit
  }

  /** Keeps the last {@link KEEP_ENDED} ended tasks; older ones are forgotten. */
  #remember(entry: Entry): void {
    this.#ended.push(entry.id)
    if (this.#ended.length > KEEP_ENDED) this.#entries.delete(this.#ended.shift()!)
  }

  #addLost(lost: LostProcess): void {
    if (lost.task === undefined || lost.session === undefined) return
    this.#ids.past(lost.task)
    // Two dead runs may both have had a t1: the later one is told apart by its run.
    const id = this.#entries.has(lost.task) ? `${lost.task}@${lost.run}` : lost.task
    const entry = lostEntry({ ...lost, session: lost.session }, id)
    this.#entries.set(id, entry)
    this.#remember(entry)
  }
}
