/** One task as the registry keeps it, and how it is shown and read (see `tasks.ts`). */

import {
  endOf,
  type Lifecycle,
  type LostProcess,
  type ManagedProcess,
  newestBytes,
  type ProcessExit,
} from '@toolvisor/process-runtime'
import type { AddTaskOptions, TaskBytes, TaskInfo, TaskKind, TaskRead } from './types.js'

/** A task in the registry. */
export interface Entry {
  readonly id: string
  readonly kind: TaskKind
  readonly owner: string | undefined
  readonly tool: string
  readonly label: string | undefined
  /** When it started (for a pending task: when it was queued, until `begin`). */
  startedAt: Date
  /** Absent for a task lost on restart, and for a pending one until `begin`. */
  process: ManagedProcess | undefined
  /** A pending task's start (`AddTaskOptions.deferred`), until `begin` or a cancel. */
  pending?: (() => ManagedProcess) | undefined
  /** Waits for a pending task to begin or end (`waitEnd`), woken by `wake`. */
  wakes?: Array<() => void> | undefined
  exit: ProcessExit | undefined
  lostWhy: string | undefined
  /** Event cursors, by reader. */
  readonly cursors: Map<string, number>
  /** Byte cursors (stdout, stderr), by reader. */
  readonly byteCursors: Map<string, readonly [number, number]>
  /** Waits of the owner in progress (see `TaskCompletion.observed`). */
  waiters: number
  /** The call that started it answered while it ran (`TaskRegistry.detach`). */
  detached: boolean
  /** Its owner was shown its final status (`TaskRegistry.seen`). */
  seen: boolean
  /** What an earlier run lost, for a task lost on restart (`told` once its owner was told). */
  lost?: LostProcess
}

/** The why of a task an earlier run lost. */
export const LOST_ON_RESTART = 'lost on restart'

const KINDS: readonly string[] = ['stream', 'service', 'bash']

/** The entry of a task an earlier run lost: failed, of the kind it was, owned by its session. */
export function lostEntry(lost: LostProcess & { readonly session: string }, id: string): Entry {
  return {
    id,
    kind: KINDS.includes(lost.kind ?? '') ? (lost.kind as TaskKind) : 'stream',
    owner: lost.session,
    tool: lost.tool,
    label: undefined,
    startedAt: new Date(lost.startedAt),
    process: undefined,
    exit: {
      status: 'failed',
      code: null,
      signal: null,
      reason: 'exit',
      why: LOST_ON_RESTART,
      at: new Date(),
    },
    lostWhy: LOST_ON_RESTART,
    cursors: new Map(),
    byteCursors: new Map(),
    waiters: 0,
    detached: false,
    seen: false,
    lost,
  }
}

/** The lifecycle of a task without a process: how it ended (a pending one cancelled), else failed. */
function endedAs(exit: ProcessExit | undefined): Lifecycle {
  if (exit === undefined) return { status: 'failed', why: 'no process' }
  if (exit.status === 'failed') return { status: 'failed', why: exit.why ?? 'failed' }
  return { status: 'exited', code: exit.code, signal: exit.signal }
}

/** A task as callers see it. */
export function info(entry: Entry): TaskInfo {
  const lifecycle: Lifecycle = entry.lostWhy
    ? { status: 'failed', why: entry.lostWhy }
    : entry.pending
      ? { status: 'pending' }
      : (entry.process?.lifecycle ?? endedAs(entry.exit))
  return {
    id: entry.id,
    kind: entry.kind,
    visibility: entry.owner === undefined ? 'all sessions' : 'owner',
    tool: entry.tool,
    ...(entry.label !== undefined ? { label: entry.label } : {}),
    lifecycle,
    startedAt: entry.startedAt,
    ...(entry.owner !== undefined ? { owner: entry.owner } : {}),
    ...(entry.exit ? { endedAt: entry.exit.at, exit: entry.exit } : {}),
    ...(entry.process ? { process: entry.process.id } : {}),
  }
}

/** Up to `max` events of a task from position `from`. */
export function pageOf(entry: Entry, from: number, max: number): TaskRead {
  if (!entry.process) return { task: info(entry), events: [], next: 0, elided: 0, total: 0 }
  const page = entry.process.output.read(from, max)
  return { task: info(entry), events: page.events, next: page.next, elided: page.elided, total: page.total }
}

/** The newest bytes of both streams after `reader`'s byte cursors, which then stand after them. */
export function bytesOf(
  entry: Entry,
  reader: string,
  options: { readonly max: number; readonly utf8?: boolean },
): TaskBytes {
  const process = entry.process
  const empty = { bytes: Buffer.alloc(0), from: 0, skipped: 0, total: 0 }
  if (!process) return { task: info(entry), stdout: empty, stderr: empty }
  // The task's state before its bytes: output that arrives meanwhile is never shown as final.
  const task = info(entry)
  const [out, err] = entry.byteCursors.get(reader) ?? [0, 0]
  const final = task.lifecycle.status === 'exited' || task.lifecycle.status === 'failed'
  const range = { max: options.max, final, utf8: options.utf8 === true }
  const stdout = newestBytes(process.output, 'stdout', { ...range, from: out })
  const stderr = newestBytes(process.output, 'stderr', { ...range, from: err })
  entry.byteCursors.set(reader, [endOf(stdout), endOf(stderr)])
  return { task, stdout, stderr }
}

/** Resolves when `process` ended (and its completion went out), `ms` passed or `signal` aborted. */
export function endOrTimeout(
  process: ManagedProcess,
  ms: number,
  signal: AbortSignal | undefined,
): Promise<void> {
  return settled(ms, signal, (done) => void process.exit.then(() => setImmediate(done)))
}

/** Resolves at the first of: `ms` passed, `signal` aborted, or what `arm` was given is called. */
function settled(
  ms: number,
  signal: AbortSignal | undefined,
  arm: (done: () => void) => void,
): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms)
    function done() {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    signal?.addEventListener('abort', done, { once: true })
    arm(done)
  })
}

/**
 * Resolves when the task ended, `ms` passed or `signal` aborted; a pending task is waited for
 * through its begin (or its cancel), then its process.
 */
export async function waitEnd(entry: Entry, ms: number, signal: AbortSignal | undefined): Promise<void> {
  const until = Date.now() + ms
  if (entry.pending)
    await settled(ms, signal, (done) => {
      entry.wakes = [...(entry.wakes ?? []), done]
    })
  const left = until - Date.now()
  if (entry.process && !entry.exit && left > 0 && !signal?.aborted)
    await endOrTimeout(entry.process, left, signal)
}

/** Wakes the waits of a pending task: it began, or was cancelled. */
export function wake(entry: Entry): void {
  const wakes = entry.wakes ?? []
  entry.wakes = undefined
  for (const done of wakes) done()
}

/** A new task's entry; its readers' cursors as given (a kept task re-adopted after a restart, decision 0113). */
export function entryOf(id: string, options: AddTaskOptions, process: ManagedProcess | undefined): Entry {
  const start = 'start' in options ? options : undefined
  return {
    id,
    kind: options.kind,
    owner: options.owner,
    tool: options.tool,
    label: options.label,
    startedAt: process?.startedAt ?? new Date(),
    process,
    ...(start?.deferred ? { pending: start.start } : {}),
    exit: undefined,
    lostWhy: undefined,
    cursors: new Map(Object.entries(start?.cursors ?? {})),
    byteCursors: new Map(Object.entries(start?.byteCursors ?? {})),
    waiters: 0,
    detached: false,
    seen: false,
  }
}

/** Its readers' cursors, as a kept process's keeper keeps them. */
export function keptCursors(entry: Entry): {
  cursors: Record<string, number>
  byteCursors: Record<string, readonly [number, number]>
} {
  return { cursors: Object.fromEntries(entry.cursors), byteCursors: Object.fromEntries(entry.byteCursors) }
}
