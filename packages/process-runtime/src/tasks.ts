import { RuntimeError } from './errors.js'
import type { SequencedEvent } from './event-log.js'
import type { Lifecycle, ManagedProcess, ProcessExit, ProcessRuntime } from './types.js'

/** What kind of long-running thing a task is. */
export type TaskKind = 'stream' | 'service' | 'bash'

/** A task as callers see it. */
export interface TaskInfo {
  /** `t1`, `t2`, ... or a name the starter chose (`bash-1`, `p1`). */
  readonly id: string
  readonly kind: TaskKind
  /** The owning session; absent: visible to every session, and `visibility` says so. */
  readonly owner?: string
  readonly visibility: 'owner' | 'all sessions'
  readonly tool: string
  readonly lifecycle: Lifecycle
  readonly startedAt: Date
  readonly endedAt?: Date
  readonly exit?: ProcessExit
  /** The process behind it (absent for a task lost on restart). */
  readonly process?: string
}

/** What an incremental or paged read returns. */
export interface TaskRead {
  readonly task: TaskInfo
  readonly events: readonly SequencedEvent[]
  /** The position after the last event returned. */
  readonly next: number
  /** Events skipped because they could not be read back. */
  readonly elided: number
  /** Events the task produced so far. */
  readonly total: number
}

/** A task that ended, as the completion surface reports it. */
export interface TaskCompletion {
  readonly task: TaskInfo
  readonly exit: ProcessExit
}

/**
 * How to register a task: with the process already started (its id is then generated, so the
 * registration cannot fail after the spawn), or with `start`, called only once the id (a chosen
 * one may be taken) is secured: a registration never fails after a spawn.
 */
export type AddTaskOptions = {
  readonly kind: TaskKind
  readonly tool: string
  readonly owner?: string
} & (
  | { readonly process: ManagedProcess; readonly id?: undefined }
  | {
      /** Starts the process, once the id is the task's. */
      readonly start: () => ManagedProcess
      /** A chosen id; default `t<n>`. A taken one is refused before anything starts. */
      readonly id?: string
    }
)

/** The `tasks` service: one registry for every long-running thing, one ownership rule. */
export interface TaskRegistry {
  add(options: AddTaskOptions): TaskInfo
  /** A task of `session` (or one visible to all); throws for a foreign or unknown id. */
  get(id: string, session: string | undefined): TaskInfo
  /** The process behind a task of `session`. */
  process(id: string, session: string | undefined): ManagedProcess
  /** The tasks `session` may see: its own and those visible to all, oldest first. */
  list(session: string | undefined): TaskInfo[]
  /** The next events for `reader` (each reader has its own cursor; default reader = the session). */
  read(
    id: string,
    session: string | undefined,
    options?: { readonly reader?: string; readonly max?: number },
  ): TaskRead
  /** Events by absolute position, for paging through everything a task produced. */
  page(
    id: string,
    session: string | undefined,
    options: { readonly offset: number; readonly max?: number },
  ): TaskRead
  /** Stops a task's process (declared cancel; `force`: SIGKILL at once) and returns its exit. */
  cancel(
    id: string,
    session: string | undefined,
    options?: { readonly force?: boolean },
  ): Promise<ProcessExit>
  /** Waits until the task ended or `ms` passed (or `signal` aborted); returns its info either way. */
  wait(id: string, session: string | undefined, ms: number, signal?: AbortSignal): Promise<TaskInfo>
  /**
   * The completion surface (the one way to learn that a task ended): the listener gets every task
   * that ends from now on. Returns the unsubscription.
   */
  onDone(listener: (completion: TaskCompletion) => void): () => void
  /** Every task, whoever owns it: for hosts and operators, never for a model. */
  all(): TaskInfo[]
}

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
export function createTaskRegistry(runtime: Pick<ProcessRuntime, 'lost' | 'annotate'>): TaskRegistry {
  const entries = new Map<string, Entry>()
  const listeners = new Set<(completion: TaskCompletion) => void>()
  const ended: string[] = []
  let counter = 0

  const info = (entry: Entry): TaskInfo => {
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

  /** The ownership fence: ids are never it (ruling 13); this check is. */
  const owned = (id: string, session: string | undefined): Entry => {
    const entry = entries.get(id)
    if (!entry) throw new RuntimeError('RUNTIME_ERR_UNKNOWN_TASK', `no task ${id}`)
    if (entry.owner !== undefined && entry.owner !== session) throw foreignTask(id)
    return entry
  }

  const remember = (entry: Entry) => {
    ended.push(entry.id)
    if (ended.length > KEEP_ENDED) entries.delete(ended.shift()!)
  }

  for (const lost of runtime.lost()) {
    if (lost.task === undefined || lost.session === undefined) continue
    counter = Math.max(counter, Number(/^t(\d+)$/.exec(lost.task)?.[1] ?? 0))
    // Two dead runs may both have had a t1: the later one is told apart by its run.
    const id = entries.has(lost.task) ? `${lost.task}@${lost.run}` : lost.task
    const entry: Entry = {
      id,
      kind: KINDS.includes(lost.kind ?? '') ? (lost.kind as TaskKind) : 'stream',
      owner: lost.session,
      tool: lost.tool,
      startedAt: new Date(lost.startedAt),
      process: undefined,
      exit: {
        status: 'failed',
        code: null,
        signal: null,
        reason: 'exit',
        why: 'lost on restart',
        at: new Date(),
      },
      lostWhy: 'lost on restart',
      cursors: new Map(),
    }
    entries.set(id, entry)
    remember(entry)
  }

  const pageOf = (entry: Entry, from: number, max: number): TaskRead => {
    if (!entry.process) return { task: info(entry), events: [], next: 0, elided: 0, total: 0 }
    const page = entry.process.read(from, max)
    return { task: info(entry), events: page.events, next: page.next, elided: page.elided, total: page.total }
  }

  return {
    add(options) {
      let id: string
      do id = options.id ?? `t${++counter}`
      while (options.id === undefined && entries.has(id))
      if (entries.has(id)) {
        throw new RuntimeError(
          'RUNTIME_ERR_TASK_ID_TAKEN',
          `task id ${id} is already taken; nothing was started`,
        )
      }
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
      entries.set(id, entry)
      runtime.annotate(process.id, {
        task: id,
        kind: options.kind,
        ...(options.owner ? { session: options.owner } : {}),
      })
      void process.exit.then((exit) => {
        entry.exit = exit
        remember(entry)
        const completion = { task: info(entry), exit }
        for (const listener of listeners) {
          try {
            listener(completion)
          } catch {
            // one listener's bug must not hide the completion from the others
          }
        }
      })
      return info(entry)
    },
    get: (id, session) => info(owned(id, session)),
    process(id, session) {
      const entry = owned(id, session)
      if (!entry.process)
        throw new RuntimeError('RUNTIME_ERR_UNKNOWN_TASK', `task ${id} has no process: ${entry.lostWhy}`)
      return entry.process
    },
    list: (session) =>
      [...entries.values()].filter((entry) => entry.owner === undefined || entry.owner === session).map(info),
    read(id, session, options = {}) {
      const entry = owned(id, session)
      const reader = options.reader ?? session ?? ''
      const from = entry.cursors.get(reader) ?? 0
      const result = pageOf(entry, from, options.max ?? DEFAULT_READ)
      entry.cursors.set(reader, result.next)
      return result
    },
    page: (id, session, options) => pageOf(owned(id, session), options.offset, options.max ?? DEFAULT_READ),
    async cancel(id, session, options = {}) {
      const entry = owned(id, session)
      if (!entry.process) return entry.exit!
      return entry.process.stop({ reason: 'cancelled', ...(options.force ? { force: true } : {}) })
    },
    async wait(id, session, ms, signal) {
      const entry = owned(id, session)
      if (entry.process && !entry.exit) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, ms)
          function done() {
            clearTimeout(timer)
            signal?.removeEventListener('abort', done)
            resolve()
          }
          signal?.addEventListener('abort', done, { once: true })
          void entry.process!.exit.then(() => setImmediate(done))
        })
      }
      return info(entry)
    },
    onDone(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    all: () => [...entries.values()].map(info),
  }
}
