import { RuntimeError } from './errors.js'
import type {
  AddTaskOptions,
  TaskCompletion,
  TaskInfo,
  TaskKind,
  TaskRead,
  TaskRegistry,
} from './task-types.js'
import type { Lifecycle, LostProcess, ManagedProcess, ProcessExit, ProcessRuntime } from './types.js'

export type * from './task-types.js'

/**
 * The ownership refusal, seed 001's stable text `task <id> belongs to another session`: built here
 * only, and thrown by every tool that fences something by its owner session.
 */
export function foreignTask(id: string): RuntimeError {
  return new RuntimeError('RUNTIME_ERR_FOREIGN_TASK', `task ${id} belongs to another session`)
}

const DEFAULT_READ = 100
const KEEP_ENDED = 1000

interface Entry {
  readonly id: string
  readonly kind: TaskKind
  readonly owner: string | undefined
  readonly tool: string
  readonly startedAt: Date
  readonly process: ManagedProcess | undefined
  exit: ProcessExit | undefined
  lostWhy: string | undefined
  readonly cursors: Map<string, number>
}

const KINDS: readonly string[] = ['stream', 'service', 'bash']

/**
 * Creates the task registry over a runtime. Tasks a previous run left running are registered as
 * `failed: lost on restart`, of the kind they were, owned by the session that had them (visible to
 * it alone, should it come back); what no session owned is for the operator only
 * (`runtime.lost()`), never shown to a session. New ids continue past every id the lost tasks
 * hold, so none collides with theirs.
 */
export function createTaskRegistry(
  runtime: Pick<ProcessRuntime, 'lost' | 'annotate'> & Partial<Pick<ProcessRuntime, 'keptLost'>>,
): TaskRegistry {
  return new Tasks(runtime)
}

class Tasks implements TaskRegistry {
  readonly #runtime: Pick<ProcessRuntime, 'lost' | 'annotate'> & Partial<Pick<ProcessRuntime, 'keptLost'>>
  readonly #entries = new Map<string, Entry>()
  readonly #listeners = new Set<(completion: TaskCompletion) => void>()
  readonly #ended: string[] = []
  #counter = 0

  constructor(
    runtime: Pick<ProcessRuntime, 'lost' | 'annotate'> & Partial<Pick<ProcessRuntime, 'keptLost'>>,
  ) {
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
    const id = this.#claim(options.id)
    const process: ManagedProcess = 'start' in options ? options.start() : options.process
    const entry: Entry = {
      id,
      kind: options.kind,
      owner: options.owner,
      tool: options.tool,
      startedAt: process.startedAt,
      process,
      exit: undefined,
      lostWhy: undefined,
      cursors: new Map(),
    }
    this.#entries.set(id, entry)
    this.#runtime.annotate(process.id, {
      task: id,
      kind: options.kind,
      ...(options.owner ? { session: options.owner } : {}),
    })
    void process.exit.then((exit) => this.#finish(entry, exit))
    return info(entry)
  }

  get(id: string, session: string | undefined): TaskInfo {
    return info(this.#owned(id, session))
  }

  process(id: string, session: string | undefined): ManagedProcess {
    const entry = this.#owned(id, session)
    if (!entry.process)
      throw new RuntimeError('RUNTIME_ERR_TASK_LOST', `task ${id} has no process: ${entry.lostWhy}`)
    return entry.process
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
    const from = entry.cursors.get(reader) ?? 0
    const result = pageOf(entry, from, options.max ?? DEFAULT_READ)
    entry.cursors.set(reader, result.next)
    return result
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
    if (!entry.process) return entry.exit!
    return entry.process.stop({ reason: 'cancelled', ...(options.force ? { force: true } : {}) })
  }

  async wait(id: string, session: string | undefined, ms: number, signal?: AbortSignal): Promise<TaskInfo> {
    const entry = this.#owned(id, session)
    if (entry.process && !entry.exit) await endOrTimeout(entry.process, ms, signal)
    return info(entry)
  }

  onDone(listener: (completion: TaskCompletion) => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  all(): TaskInfo[] {
    return [...this.#entries.values()].map(info)
  }

  /** The id a new task gets: the chosen one if free, else the next `t<n>` nothing holds. */
  #claim(chosen: string | undefined): string {
    if (chosen === undefined) {
      let id: string
      do id = `t${++this.#counter}`
      while (this.#entries.has(id))
      return id
    }
    if (this.#entries.has(chosen)) {
      throw new RuntimeError(
        'RUNTIME_ERR_TASK_ID_TAKEN',
        `task id ${chosen} is already taken; nothing was started`,
      )
    }
    return chosen
  }

  /** The ownership fence: ids are never it (ruling 13); this check is. */
  #owned(id: string, session: string | undefined): Entry {
    const entry = this.#entries.get(id)
    if (!entry) throw new RuntimeError('RUNTIME_ERR_UNKNOWN_TASK', `no task ${id}`)
    if (entry.owner !== undefined && entry.owner !== session) throw foreignTask(id)
    return entry
  }

  #finish(entry: Entry, exit: ProcessExit): void {
    entry.exit = exit
    this.#remember(entry)
    const completion = { task: info(entry), exit }
    for (const listener of this.#listeners) {
      try {
        listener(completion)
      } catch {
        // one listener's bug must not hide the completion from the others
      }
    }
  }

  /** Keeps the last {@link KEEP_ENDED} ended tasks; older ones are forgotten. */
  #remember(entry: Entry): void {
    this.#ended.push(entry.id)
    if (this.#ended.length > KEEP_ENDED) this.#entries.delete(this.#ended.shift()!)
  }

  #addLost(lost: LostProcess): void {
    if (lost.task === undefined || lost.session === undefined) return
    this.#counter = Math.max(this.#counter, Number(/^t(\d+)$/.exec(lost.task)?.[1] ?? 0))
    // Two dead runs may both have had a t1: the later one is told apart by its run.
    const id = this.#entries.has(lost.task) ? `${lost.task}@${lost.run}` : lost.task
    const entry: Entry = {
      id,
      kind: KINDS.includes(lost.kind ?? '') ? (lost.kind as TaskKind) : 'stream',
      owner: lost.session,
      tool: lost.tool,
      startedAt: new Date(lost.startedAt),
      process: undefined,
      exit: { status: 'failed', code: null, signal: null, reason: 'exit', why: LOST, at: new Date() },
      lostWhy: LOST,
      cursors: new Map(),
    }
    this.#entries.set(id, entry)
    this.#remember(entry)
  }
}

const LOST = 'lost on restart'

function info(entry: Entry): TaskInfo {
  const lifecycle: Lifecycle = entry.lostWhy
    ? { status: 'failed', why: entry.lostWhy }
    : (entry.process?.lifecycle ?? { status: 'failed', why: 'no process' })
  return {
    id: entry.id,
    kind: entry.kind,
    visibility: entry.owner === undefined ? 'all sessions' : 'owner',
    tool: entry.tool,
    lifecycle,
    startedAt: entry.startedAt,
    ...(entry.owner !== undefined ? { owner: entry.owner } : {}),
    ...(entry.exit ? { endedAt: entry.exit.at, exit: entry.exit } : {}),
    ...(entry.process ? { process: entry.process.id } : {}),
  }
}

function pageOf(entry: Entry, from: number, max: number): TaskRead {
  if (!entry.process) return { task: info(entry), events: [], next: 0, elided: 0, total: 0 }
  const page = entry.process.read(from, max)
  return { task: info(entry), events: page.events, next: page.next, elided: page.elided, total: page.total }
}

/** Resolves when `process` ended (and its completion went out), `ms` passed or `signal` aborted. */
function endOrTimeout(process: ManagedProcess, ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms)
    function done() {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    signal?.addEventListener('abort', done, { once: true })
    void process.exit.then(() => setImmediate(done))
  })
}
