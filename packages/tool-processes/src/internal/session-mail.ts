import type { Mailbox } from '@toolvisor/mailbox'
import {
  type Sessions,
  stopOwnedTasks,
  type TaskCompletion,
  type TaskInfo,
  type TaskRegistry,
} from '@toolvisor/tasks'
import { statusOf } from '../answers.js'
import type { Handles } from './handles.js'

/** What ties sessions to their mailboxes. */
export interface SessionMailDeps {
  readonly sessions: Sessions
  readonly mailbox: Mailbox
  readonly tasks: TaskRegistry
  readonly handles: Handles
}

/**
 * A session is an owner token plus a mailbox: every session opened (now or later) gets its
 * mailbox, and mail of each task an earlier run lost that it owned and was never told of (once:
 * `tasks.tellLost`); one that closes first has every process it owns stopped with its declared
 * cancel (their last mail still reaches it), then its mailbox closed. A stream call that ends is a completion
 * envelope from `task:<id>` to its owner (services and background shells post their own). Returns
 * the unwiring.
 */
export function wireSessionMail({ sessions, mailbox, tasks, handles }: SessionMailDeps): () => void {
  const opened = (session: string) => {
    mailbox.open(session)
    tasks.tellLost(session, (task) => postLost(mailbox, tasks, session, task))
  }
  for (const session of sessions.list()) opened(session.id)
  const offOpen = sessions.onOpen((session) => opened(session.id))
  const offClose = sessions.onClose(async (session) => {
    await stopOwnedTasks(tasks, session.id)
    handles.forget(session.id)
    if (mailbox.isOpen(session.id)) mailbox.closeSession(session.id)
  })
  const offDone = tasks.onDone((completion) => postCompletion(mailbox, completion))
  const offSeen = tasks.onNews((news) => {
    if (news.type === 'seen') withdrawEnd(mailbox, news.task)
  })
  return () => {
    offSeen()
    offDone()
    offClose()
    offOpen()
  }
}

/**
 * A task's end its owner was just shown another way (a status, a listing, `bash_output`, an MCP
 * task's result: `tasks.seen`): its completion mail not delivered yet is withdrawn, whoever posted
 * it (`task:<id>` for streams, shells and losses, `process:<id>` for services), so the end reaches
 * the model once (decision 0104). Mail already delivered stays delivered.
 */
function withdrawEnd(mailbox: Mailbox, task: TaskInfo): void {
  const owner = task.owner
  if (owner === undefined || !mailbox.isOpen(owner)) return
  for (const from of [`task:${task.id}`, `process:${task.id}`] as const) {
    mailbox.withdraw(owner, { from, kind: 'completion' })
  }
}

/**
 * The report of a task an earlier run lost, to its owner when it comes back: a completion whose id
 * is the loss's own, so a post repeated after a crash is the same mail. Its body is in the words of
 * the surface that owns the task's kind when that surface set some (`tasks.wordLost`: a bash
 * profile's), else the generic record.
 */
function postLost(mailbox: Mailbox, tasks: TaskRegistry, session: string, task: TaskInfo): void {
  const startedAt = task.startedAt.toISOString()
  const id = `lost-${task.id}-${startedAt}`
  const words = tasks.lostWords(task)
  if (words === undefined) postEnd(mailbox, session, task, id, { startedAt })
  else mailbox.post(session, { id, from: `task:${task.id}`, kind: 'completion', body: words })
}

/**
 * The completion mail of a stream call, to its owner while its mailbox is open. Services post their
 * own; background shells too (`tool-bash`, in its seed's words, and not when the owner was waiting).
 */
function postCompletion(mailbox: Mailbox, { task, exit }: TaskCompletion): void {
  if (task.kind !== 'stream' || task.owner === undefined || !mailbox.isOpen(task.owner)) return
  postEnd(mailbox, task.owner, task, `done-${task.id}`, {
    exitCode: exit.code,
    signal: exit.signal,
    reason: exit.reason,
    ...(exit.why ? { why: exit.why.slice(0, 2000) } : {}),
    ...(exit.limit ? { limit: exit.limit.field } : {}),
    ...(exit.usage ? { usage: exit.usage } : {}),
  })
}

/** A completion from `task:<id>` to `session`: what the task was, how it ended, and `more`. */
function postEnd(
  mailbox: Mailbox,
  session: string,
  task: TaskInfo,
  id: string,
  more: Record<string, unknown>,
): void {
  mailbox.post(session, {
    id,
    from: `task:${task.id}`,
    kind: 'completion',
    body: { task: task.id, tool: task.tool, kind: task.kind, status: statusOf(task.lifecycle), ...more },
  })
}
