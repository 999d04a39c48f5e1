import { ESCAPING, eventValue, fitBackward, fitForward } from '@toolvisor/answers'
import type { SequencedEvent } from '@toolvisor/process-runtime'
import type { TaskInfo, TaskRead, TaskRegistry } from '@toolvisor/tasks'
import type { ToolResult } from '@toolvisor/toolbox'
import { answer, statusOf, summary } from '../answers.js'
import { Service } from './service.js'

/** Room an answer keeps for its fields around the events (ids, counts, the note). */
const ENVELOPE = 512

/** What the event sub-commands need. */
export interface EventsContext {
  readonly tasks: TaskRegistry
  readonly session: string | undefined
  /** The most bytes an answer holds. */
  readonly resultBytes: number
}

/** A contiguous run of events, as answered: where it starts and ends, and what is left. */
function page(
  task: TaskInfo,
  events: readonly SequencedEvent[],
  taken: number,
  read: Pick<TaskRead, 'total' | 'elided' | 'next'>,
  values: readonly unknown[],
): Record<string, unknown> {
  const from = events[0]?.seq ?? read.next
  const next = taken > 0 ? events[taken - 1]!.seq + 1 : from
  return {
    process: task.id,
    status: statusOf(task.lifecycle),
    from,
    events: values,
    next,
    total: read.total,
    ...(read.elided > 0 ? { elided: read.elided } : {}),
  }
}

/** A note when the byte budget, not the count asked for, ended the answer. */
function budgetNote(asked: number, got: number, budget: number, more: string): Record<string, unknown> {
  if (got >= asked) return {}
  return { note: `${got} of the ${asked} events fit in an answer of ${budget} bytes; ${more}` }
}

/** `tail`: the last `n` events, oldest first; the newest that fit when they do not all fit. */
export function tail(context: EventsContext, id: string, n: number): ToolResult {
  const { tasks, session } = context
  const task = tasks.get(id, session)
  const total = task.process === undefined ? 0 : tasks.process(task.id, session).output.counters().events
  const read = tasks.page(task.id, session, { offset: Math.max(0, total - n), max: n })
  const fitted = fitBackward(
    read.events.map((e) => eventValue(e.value)),
    context.resultBytes - ENVELOPE,
    ESCAPING,
  )
  const events = read.events.slice(read.events.length - fitted.values.length)
  const asked = read.events[0]?.seq ?? total
  const more = `page the earlier ones with processes {"command":"page","process":"${task.id}","offset":${asked}}`
  return answer({
    ...page(task, events, events.length, read, fitted.values),
    ...budgetNote(read.events.length, events.length, context.resultBytes, more),
  })
}

/** `page`: up to `max` events from absolute position `offset`. */
export function pageAt(context: EventsContext, id: string, offset: number, max: number): ToolResult {
  const { tasks, session } = context
  const task = tasks.get(id, session)
  const read = tasks.page(task.id, session, { offset, max })
  const fitted = fitForward(
    read.events.map((e) => eventValue(e.value)),
    context.resultBytes - ENVELOPE,
    ESCAPING,
  )
  const body = page(task, read.events, fitted.values.length, read, fitted.values)
  const more = `go on with processes {"command":"page","process":"${task.id}","offset":${body.next}}`
  return answer({
    ...body,
    ...budgetNote(read.events.length, fitted.values.length, context.resultBytes, more),
  })
}

/**
 * `read`: up to `max` events from the caller's own cursor (one per session and task), which then
 * stands after the last event answered (never after one the budget left out).
 */
export function readOn(context: EventsContext, id: string, max: number): ToolResult {
  const { tasks, session } = context
  // One event moves the cursor by one and says where it stood; the rest is read by position.
  const first = tasks.read(id, session, { max: 1 })
  const head = first.events[0]
  if (head === undefined) return answer(page(first.task, [], 0, first, []))
  const rest = max > 1 ? tasks.page(id, session, { offset: head.seq + 1, max: max - 1 }).events : []
  const events = [head, ...rest]
  const fitted = fitForward(
    events.map((e) => eventValue(e.value)),
    context.resultBytes - ENVELOPE,
    ESCAPING,
  )
  const taken = fitted.values.length
  const moved = taken > 1 ? tasks.read(id, session, { max: taken - 1 }) : first
  const body = page(moved.task, events, taken, { ...moved, elided: first.elided }, fitted.values)
  const more = `go on with processes {"command":"read","process":"${first.task.id}"}`
  return answer({ ...body, ...budgetNote(events.length, taken, context.resultBytes, more) })
}

/** `status`: the task with its counters, its last events and its last stderr lines, within the budget. */
export function status(
  context: EventsContext,
  id: string,
  counts: { events: number; stderr: number },
): ToolResult {
  const { tasks, session } = context
  const task = tasks.get(id, session)
  if (task.process === undefined) return answer({ ...summary(task), counters: null, events: [], stderr: [] })
  const process = tasks.process(task.id, session)
  const half = Math.floor((context.resultBytes - ENVELOPE) / 2)
  const events = fitBackward(
    process.output.tail(counts.events).map((e) => eventValue(e.value)),
    half,
    ESCAPING,
  )
  const stderr = fitBackward(process.output.stderrLines(counts.stderr), half, ESCAPING)
  return answer({
    ...summary(task),
    counters: process.output.counters(),
    // The tree's live use (its final account once ended), where a cgroup accounts for it.
    ...(process.usage() ? { usage: process.usage() } : {}),
    // The runtime it was started with, resolved: which user, where, which envdir (spec §2.3).
    ...(process.startedWith ? { runtime: process.startedWith } : {}),
    // Kept across a restart of toolvisor (decision 0113): this daemon took it over from its keeper.
    ...(process.resumedAt
      ? { resumed: `resumed after a restart at ${process.resumedAt.toISOString()}` }
      : {}),
    // On a terminal: its size now (`screen` shows it, `keys` types into it).
    ...(process.terminal
      ? { terminal: `${process.terminal.size.columns}x${process.terminal.size.rows}` }
      : {}),
    events: events.values,
    stderr: stderr.values,
    ...(process instanceof Service ? process.facts() : {}),
  })
}
