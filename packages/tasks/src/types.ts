/** The shapes of the task registry (see `tasks.ts`). */
import type {
  Lifecycle,
  ManagedProcess,
  ProcessExit,
  SequencedEvent,
  StreamBytes,
} from '@toolvisor/process-runtime'

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
  /** What the task runs, for people (a background shell's command), when its starter gave it. */
  readonly label?: string
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

/** What a bounded read of both output streams returns (`readBytes`). */
export interface TaskBytes {
  readonly task: TaskInfo
  readonly stdout: StreamBytes
  readonly stderr: StreamBytes
}

/** A task that ended, as the completion surface reports it. */
export interface TaskCompletion {
  readonly task: TaskInfo
  readonly exit: ProcessExit
  /**
   * True when its owner was waiting on it (`wait`) as it ended: that wait returns the end to the
   * owner itself, so a notice of the completion would tell it twice.
   */
  readonly observed: boolean
}

/**
 * What a surface that follows tasks from outside (a harness's keyed items, `toolvisor serve
 * --notify`) hears, in order, at most once each per task: `detached` when the call that started
 * it answered while it runs; `ended` with its completion (`observed`: its owner's wait returned
 * it), or, for a task an earlier run lost, when its owner is told (`tellLost`); `seen` when its
 * owner was shown its final status inline (a status, a stop's answer).
 */
export type TaskNews =
  | { readonly type: 'detached'; readonly task: TaskInfo }
  | { readonly type: 'ended'; readonly task: TaskInfo; readonly observed: boolean }
  | { readonly type: 'seen'; readonly task: TaskInfo }

/**
 * How to register a task: with the process already started (its id is then generated, so the
 * registration cannot fail after the spawn), or with `start`, called only once the id (a chosen
 * one may be taken) is secured: a registration never fails after a spawn.
 */
export type AddTaskOptions = {
  readonly kind: TaskKind
  readonly tool: string
  readonly owner?: string
  /** What it runs, for people (`TaskInfo.label`). */
  readonly label?: string
} & (
  | { readonly process: ManagedProcess; readonly id?: undefined }
  | {
      /** Starts the process, once the id is the task's. */
      readonly start: () => ManagedProcess
      /**
       * A chosen id; default `<idPrefix><n>`. One held by a running task, or by an ended task of
       * another session, is refused before anything starts; one held by an ended task of the same
       * owner is taken over (that task is forgotten).
       */
      readonly id?: string
      /** Each reader's event cursor to begin with (a kept task re-adopted after a restart, decision 0113). */
      readonly cursors?: Readonly<Record<string, number>>
      /** Each reader's byte cursors (stdout, stderr) to begin with, likewise. */
      readonly byteCursors?: Readonly<Record<string, readonly [number, number]>>
      /**
       * Not started yet: the task is `pending` (its id held, shown, cancellable: a cancel ends it
       * `cancelled` without a process) until its starter calls `tasks.begin(id)`.
       */
      readonly deferred?: boolean
      /**
       * What the registry's own ids start with when no `id` is chosen: `t` (default: `t1`, `t2`,
       * ...), or a surface's own (`bash-` for bash background tasks, ruling 13). Each prefix is
       * counted on its own, past every id a task (a lost one too) holds.
       */
      readonly idPrefix?: string
    }
)

/** The `tasks` service: one registry for every long-running thing, one ownership rule. */
export interface TaskRegistry {
  add(options: AddTaskOptions): TaskInfo
  /** Starts a `deferred` task that is still pending; its info, or undefined when there is none to start. */
  begin(id: string): TaskInfo | undefined
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
  /**
   * The newest output bytes of both streams since `reader`'s previous `readBytes` (its own byte
   * cursors, apart from the event cursor of `read`), at most `max` bytes of each; what it skipped
   * is counted, never silently lost. `utf8`: never cut a character (see `StreamRange`).
   */
  readBytes(
    id: string,
    session: string | undefined,
    options: { readonly reader?: string; readonly max: number; readonly utf8?: boolean },
  ): TaskBytes
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
  /**
   * Says that the call that started the task answered while it runs (a placeholder, a handle, a
   * background id): from now on its owner follows it by its id. Once per task; nothing for an
   * ended or unknown one.
   */
  detach(id: string): void
  /**
   * Says that `session`, the owner, was just shown the task's final status inline (a status, a
   * stop's answer, a listing): its completion is no news to it any more. Nothing for a task
   * still running, another session's, or one already seen.
   */
  seen(id: string, session: string | undefined): void
  /** The news of every task from now on (`TaskNews`); returns the unsubscription. */
  onNews(listener: (news: TaskNews) => void): () => void
  /**
   * Tells `session` of each task an earlier run lost that it owned and was never told of: `tell`
   * (which posts the report) runs first, then the state directory records it told, so a crash in
   * between tells again (an idempotent post makes that once) and nothing tells it twice.
   */
  tellLost(session: string, tell: (task: TaskInfo) => void): void
  /**
   * Sets how the surface that owns tasks of `kind` words the report of one an earlier run lost
   * (the body of the completion mail its owner gets), so the model reads a loss in the words it
   * reads every other end in (hyperhive's status JSON, seed 001's notice). The last one set for
   * a kind wins. Returns the unsetting.
   */
  wordLost(kind: TaskKind, words: (task: TaskInfo) => unknown): () => void
  /** A lost task's report in its kind's words, or `undefined` when no surface set any. */
  lostWords(task: TaskInfo): unknown
}
