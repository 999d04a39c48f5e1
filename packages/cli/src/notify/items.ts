import type { Envelope, Mailbox } from '@toolvisor/mailbox'
import type { TaskInfo, TaskNews, TaskRegistry } from '@toolvisor/tasks'
import { statusOf } from '@toolvisor/tool-processes'
import type { NotifyItem } from './queue.js'

/** What the harness was last given for a task. */
type Shown = 'running' | 'done' | 'cleared'

/** Tasks whose state is remembered at most; the oldest are forgotten past it. */
const REMEMBERED = 10_000

/**
 * Turns the registry's news and the mailbox's deliveries into the harness's keyed items, one key
 * per task: `running` when the task outlived the call that started it, then `done` with its
 * summary; a `clear` instead when the model got the end inline (its owner's wait returned it, a
 * status or a stop showed it, its completion mail was delivered), or nothing when nothing was
 * shown yet (the call that started it returned its end). Returns the unsubscription.
 */
export function followTasks(
  tasks: TaskRegistry,
  mailbox: Mailbox | undefined,
  put: (item: NotifyItem) => void,
): () => void {
  const shown = new Map<string, Shown>()
  let seq = 0
  const item = (task: TaskInfo, fields: Pick<NotifyItem, 'op' | 'state' | 'summary'>): NotifyItem => ({
    v: 1,
    key: task.id,
    ...fields,
    session: task.owner ?? null,
    ...(fields.op === 'set' ? { task: described(task) } : {}),
    seq: ++seq,
    at: new Date().toISOString(),
  })
  const show = (task: TaskInfo, now: Shown, fields: Pick<NotifyItem, 'op' | 'state' | 'summary'>) => {
    shown.delete(task.id)
    shown.set(task.id, now)
    if (shown.size > REMEMBERED) shown.delete(shown.keys().next().value!)
    put(item(task, fields))
  }
  const clear = (task: TaskInfo) => {
    const was = shown.get(task.id)
    if (was === 'running' || was === 'done') show(task, 'cleared', { op: 'clear' })
  }
  const onNews = (news: TaskNews) => {
    const was = shown.get(news.task.id)
    if (news.type === 'detached' && was === undefined)
      show(news.task, 'running', { op: 'set', state: 'running' })
    else if (news.type === 'ended' && news.observed) clear(news.task)
    // A task an earlier run lost, told to its owner now: whatever the harness kept of it ends.
    else if (news.type === 'ended' && (was === 'running' || (was === undefined && !news.task.process)))
      show(news.task, 'done', { op: 'set', state: 'done', summary: summaryOf(news.task) })
    else if (news.type === 'seen') clear(news.task)
  }
  const offNews = tasks.onNews(onNews)
  const offMail = mailbox?.onDeliver((session, envelopes) => {
    for (const id of endsIn(envelopes)) {
      const task = tasks.all().find((t) => t.id === id && t.owner === session)
      if (task !== undefined) clear(task)
    }
  })
  return () => {
    offNews()
    offMail?.()
  }
}

/** The tasks whose end a batch of mail tells: completions from `task:<id>` or `process:<id>`. */
function endsIn(envelopes: readonly Envelope[]): string[] {
  return envelopes
    .filter((envelope) => envelope.kind === 'completion' && envelope.from !== 'system')
    .map((envelope) => envelope.from.slice(envelope.from.indexOf(':') + 1))
}

function described(task: TaskInfo): NonNullable<NotifyItem['task']> {
  return {
    kind: task.kind,
    tool: task.tool,
    ...(task.label !== undefined ? { label: task.label.slice(0, 200) } : {}),
    startedAt: task.startedAt.toISOString(),
  }
}

/** `bash (sleep 1; echo hi): exited (0)`, `log_watcher: failed: ...`. */
function summaryOf(task: TaskInfo): string {
  const label = task.label === undefined ? '' : ` (${task.label.slice(0, 120)})`
  return `${task.tool}${label}: ${statusOf(task.lifecycle)}`.slice(0, 2000)
}
