import type { Mailbox, Sender } from '@toolvisor/mailbox'
import { ensureSession, type Sessions, type TaskRegistry } from '@toolvisor/tasks'
import type { ToolResult } from '@toolvisor/toolbox'
import { answer, refusal, statusOf } from '../answers.js'

/** Room an answer keeps around the envelopes (the note, `more`). */
const ENVELOPE = 512

/** What `wait` needs. */
export interface WaitContext {
  readonly tasks: TaskRegistry
  readonly mailbox: Mailbox
  readonly sessions: Sessions
  readonly session: string | undefined
  readonly resultBytes: number
  readonly signal: AbortSignal
}

/**
 * `wait`: blocks until the session has new mail (from `process` alone when given: a service's
 * events and end, a task's completion), at most `seconds`, then delivers it: the session's
 * delivery point, so the same mail is not folded into a later answer again. Says so when the bound
 * passed, or when the process it waits on has ended and its mail was already delivered.
 */
export async function waitForMail(
  context: WaitContext,
  request: { readonly process: string | undefined; readonly seconds: number },
): Promise<ToolResult> {
  const { mailbox, session } = context
  if (session === undefined)
    return refusal('wait needs a session: mail goes to the session that started a process')
  ensureSession(context.sessions, session)
  const task = request.process === undefined ? undefined : context.tasks.get(request.process, session)
  const from =
    task === undefined
      ? undefined
      : (sender: Sender) => sender === `process:${task.id}` || sender === `task:${task.id}`
  // A process that ended has nothing more to say: only mail it left unread is worth a wait.
  const timeoutMs = task?.exit !== undefined ? 0 : request.seconds * 1000
  const woke = await mailbox.wait(session, { timeoutMs, signal: context.signal, ...(from ? { from } : {}) })
  const about =
    task === undefined
      ? {}
      : { process: task.id, status: statusOf(context.tasks.get(task.id, session).lifecycle) }
  switch (woke.reason) {
    case 'mail': {
      const page = mailbox.deliver(session, { maxBytes: context.resultBytes - ENVELOPE })
      const more = page.more ? { more: true, note: 'more mail waits: call wait again to read it' } : {}
      return answer({ mail: page.envelopes, ...more })
    }
    case 'timeout':
      if (task?.exit !== undefined)
        return answer({ mail: [], ...about, note: `${task.id} has ended; its mail was delivered already` })
      return answer({ mail: [], ...about, timeout: `no new mail within ${request.seconds} s` })
    case 'aborted':
      return answer({ mail: [], ...about, cancelled: 'the wait was cancelled' })
    case 'closed':
      return refusal('the session closed while waiting; its mail is gone with it')
  }
}
