import type { Mailbox } from '@toolvisor/mailbox'
import type { ManagedProcess } from '@toolvisor/process-runtime'
import type { SessionInfo, Sessions, TaskInfo, TaskRegistry } from '@toolvisor/tasks'

/** What the page reads of the mailbox: how much mail waits for each session, and from whom. */
export type MailView = Pick<Mailbox, 'isOpen' | 'unread' | 'cursor' | 'page'>

/** How many times a service restarted, when `process` is one that says so. */
export type RestartsOf = (process: ManagedProcess) => number | undefined

/** One task as the page shows it. */
export interface TaskView {
  /** The handle the model uses (`t1`, `p1`, `bash-1`). */
  readonly id: string
  readonly kind: string
  readonly tool: string
  /** What it runs, for people (a background shell's command), when the registry says. */
  readonly label?: string
  /** `running`, `exited`, `restarting`, ... */
  readonly status: string
  /** What the status says besides (why it failed, which restart). */
  readonly detail?: string
  /** Epoch ms. */
  readonly startedAt: number
  readonly endedAt?: number
  readonly exit?: {
    readonly code: number | null
    readonly signal: string | null
    readonly reason: string
    readonly why?: string
  }
  /** The runtime's process id (`proc-4`). */
  readonly process?: string
  readonly events?: number
  readonly stdoutBytes?: number
  readonly stderrBytes?: number
  /** Restarts so far (services that restart). */
  readonly restarts?: number
  /** Bytes of memory its tree uses now (its peak once ended), from its cgroup. */
  readonly memory?: number
  /** CPU time of its tree, in milliseconds, from its cgroup. */
  readonly cpuMs?: number
  /** Bytes its output wrote to its spill files, once it spilled. */
  readonly spillBytes?: number
  /** Through its network gate (an allow list, decision 0111): bytes from the network, to it, and connections refused. */
  readonly netIn?: number
  readonly netOut?: number
  readonly netBlocked?: number
  /** Envelopes from this task waiting for the session's next delivery. */
  readonly mail?: number
}

/** A session and its tasks; `id` is empty for tasks every session sees. */
export interface SessionView {
  readonly id: string
  readonly open: boolean
  readonly origin?: string
  /** Its client as the client named itself (`claude-code 2.1.197`), when known. */
  readonly client?: string
  /** Its last calls, oldest first (`Sessions.note`): a oneshot call's only trace. */
  readonly calls?: readonly {
    readonly tool: string
    readonly at: number
    readonly ms: number
    readonly error: boolean
  }[]
  readonly openedAt?: number
  /** Envelopes waiting for the session's next delivery, when the mailbox is composed. */
  readonly mail?: number
  readonly tasks: readonly TaskView[]
  /** Ended tasks left out (the newest are shown). */
  readonly omitted: number
}

/** An operator's action, as the page lists it. */
export interface ActionView {
  readonly at: number
  readonly who: string
  readonly what: string
}

/** The whole state the page shows. */
export interface StateView {
  readonly control: boolean
  readonly sessions: readonly SessionView[]
  /** Sessions that closed and still have tasks kept, left out (the newest are shown). */
  readonly closedOmitted: number
  readonly actions: readonly ActionView[]
}

/** What a snapshot reads. */
export interface Sources {
  readonly sessions: Sessions
  readonly tasks: TaskRegistry
  readonly mail: MailView | undefined
  readonly restartsOf: RestartsOf
}

/** Tasks shown per session at most (every running one, then the newest ended). */
const TASKS_SHOWN = 100
/** Closed sessions shown at most. */
const CLOSED_SHOWN = 20

/** The state now: open sessions oldest first, then closed ones with tasks still kept, then unowned tasks. */
export function snapshot(sources: Sources, control: boolean, actions: readonly ActionView[]): StateView {
  const byOwner = new Map<string, TaskInfo[]>()
  for (const task of sources.tasks.all()) {
    const owner = task.owner ?? ''
    const list = byOwner.get(owner) ?? []
    list.push(task)
    byOwner.set(owner, list)
  }
  const open = sources.sessions.list()
  const openIds = new Set(open.map((s) => s.id))
  const closed = [...byOwner.keys()].filter((id) => id !== '' && !openIds.has(id))
  const shownClosed = closed.slice(-CLOSED_SHOWN)
  const views: SessionView[] = [
    ...open.map((session) => sessionView(sources, session.id, byOwner.get(session.id) ?? [], session)),
    ...shownClosed.map((id) => sessionView(sources, id, byOwner.get(id)!, undefined)),
    ...(byOwner.has('') ? [sessionView(sources, '', byOwner.get('')!, undefined)] : []),
  ]
  return { control, sessions: views, closedOmitted: closed.length - shownClosed.length, actions }
}

function sessionView(
  sources: Sources,
  id: string,
  tasks: readonly TaskInfo[],
  session: SessionInfo | undefined,
): SessionView {
  const waiting = session ? mailWaiting(sources.mail, id) : undefined
  const running = tasks.filter((t) => t.exit === undefined)
  const ended = tasks.filter((t) => t.exit !== undefined)
  const keep = new Set([...running, ...ended.slice(-Math.max(0, TASKS_SHOWN - running.length))])
  const shown = tasks.filter((t) => keep.has(t))
  return {
    id,
    open: session !== undefined,
    ...(session ? { origin: session.origin, openedAt: session.openedAt.getTime() } : {}),
    ...(session?.client ? { client: session.client } : {}),
    ...(session?.calls?.length ? { calls: session.calls } : {}),
    ...(waiting ? { mail: waiting.total } : {}),
    tasks: shown.map((task) => taskView(sources, task, waiting?.from)),
    omitted: tasks.length - shown.length,
  }
}

function taskView(sources: Sources, task: TaskInfo, mail: Map<string, number> | undefined): TaskView {
  const process = processOf(sources.tasks, task)
  const counters = process?.output.counters()
  const restarts = process ? sources.restartsOf(process) : undefined
  const usage = process?.usage()
  const memory = task.exit ? usage?.memoryPeak : usage?.memory
  const waiting = mail?.get(`process:${task.id}`) ?? mail?.get(`task:${task.id}`)
  const detail = detailOf(task.lifecycle)
  // `label` comes with the registry of the bash branch (a background shell's command).
  const { label } = task as TaskInfo & { readonly label?: unknown }
  return {
    id: task.id,
    kind: task.kind,
    tool: task.tool,
    ...(typeof label === 'string' ? { label } : {}),
    status: task.lifecycle.status,
    ...(detail !== undefined ? { detail } : {}),
    startedAt: task.startedAt.getTime(),
    ...(task.endedAt ? { endedAt: task.endedAt.getTime() } : {}),
    ...(task.exit
      ? {
          exit: {
            code: task.exit.code,
            signal: task.exit.signal,
            reason: task.exit.reason,
            ...(task.exit.why !== undefined ? { why: task.exit.why } : {}),
          },
        }
      : {}),
    ...(task.process ? { process: task.process } : {}),
    ...(counters
      ? { events: counters.events, stdoutBytes: counters.stdoutBytes, stderrBytes: counters.stderrBytes }
      : {}),
    ...(restarts !== undefined ? { restarts } : {}),
    ...(memory !== undefined ? { memory } : {}),
    ...(usage?.cpuMs !== undefined ? { cpuMs: usage.cpuMs } : {}),
    ...(usage?.spillBytes ? { spillBytes: usage.spillBytes } : {}),
    ...(usage?.network
      ? { netIn: usage.network.bytesIn, netOut: usage.network.bytesOut, netBlocked: usage.network.denied }
      : {}),
    ...(mail ? { mail: waiting ?? 0 } : {}),
  }
}

/** The process behind a task, asked for as its owner asks (a lost task has none). */
function processOf(tasks: TaskRegistry, task: TaskInfo): ManagedProcess | undefined {
  if (task.process === undefined) return undefined
  try {
    return tasks.process(task.id, task.owner)
  } catch {
    return undefined // forgotten meanwhile
  }
}

function detailOf(lifecycle: TaskInfo['lifecycle']): string | undefined {
  const fields = lifecycle as { readonly why?: unknown; readonly n?: unknown }
  if (typeof fields.why === 'string') return fields.why
  if (typeof fields.n === 'number') return `restart ${fields.n}`
  return undefined
}

/** The envelopes waiting for a session's next delivery, in all and by sender. */
function mailWaiting(
  mail: MailView | undefined,
  session: string,
): { total: number; from: Map<string, number> } | undefined {
  if (mail === undefined || !mail.isOpen(session)) return undefined
  const total = mail.unread(session)
  const from = new Map<string, number>()
  if (total === 0) return { total, from }
  for (const envelope of mail.page(session, { after: mail.cursor(session) }).envelopes)
    from.set(envelope.from, (from.get(envelope.from) ?? 0) + 1)
  return { total, from }
}

/**
 * The default {@link RestartsOf}: a process that reports its restarts, as a count
 * (`restarts: number`) or in its facts (`facts().restarts`, a number or the list of them).
 */
export function reportedRestarts(process: ManagedProcess): number | undefined {
  const said = process as unknown as { restarts?: unknown; facts?: () => { restarts?: unknown } }
  if (typeof said.restarts === 'number') return said.restarts
  if (typeof said.facts !== 'function') return undefined
  const restarts = said.facts().restarts
  if (typeof restarts === 'number') return restarts
  return Array.isArray(restarts) ? restarts.length : undefined
}
