import type { Mailbox } from '@toolvisor/mailbox'
import type { TaskCompletion, TaskRegistry } from '@toolvisor/tasks'

/**
 * Turns the registry's completions of background shells into mail to their owner, in the
 * profile's words: once per task (the registry's `onDone` reports each end once), and not at all
 * when the owner was waiting on it inline (`observed`: that wait returned the end), when it has no
 * owner, or when no mailbox has the owner's session open. Returns the unsubscription.
 */
export function mailCompletions(
  tasks: TaskRegistry,
  mailbox: () => Mailbox | undefined,
  body: (completion: TaskCompletion) => unknown,
): () => void {
  return tasks.onDone((completion) => {
    const { task } = completion
    if (task.kind !== 'bash' || completion.observed || task.owner === undefined) return
    const box = mailbox()
    if (box === undefined || !box.isOpen(task.owner)) return
    box.post(task.owner, {
      id: `done-${task.id}-${task.process ?? 'lost'}`,
      from: `task:${task.id}`,
      kind: 'completion',
      body: body(completion),
    })
  })
}
