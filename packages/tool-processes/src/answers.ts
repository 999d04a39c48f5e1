import { ESCAPING, fitBackward, visibleJson } from '@toolvisor/answers'
import type { Lifecycle } from '@toolvisor/process-runtime'
import type { TaskInfo } from '@toolvisor/tasks'
import type { ToolResult } from '@toolvisor/toolbox'

/**
 * An answer of `processes`: JSON, with every control code a process produced escaped (JSON
 * escapes, so the values parse back unchanged).
 */
export function answer(body: Record<string, unknown>, isError = false): ToolResult {
  return { content: [{ type: 'text', text: visibleJson(body) }], isError, structuredContent: body }
}

/** An error answer. */
export function refusal(error: string): ToolResult {
  return answer({ error }, true)
}

/** One line of `list`. */
export function summary(task: TaskInfo) {
  return {
    process: task.id,
    tool: task.tool,
    kind: task.kind,
    status: statusOf(task.lifecycle),
    since: task.startedAt.toISOString(),
    age: age(task),
    ...(task.visibility === 'all sessions' ? { visibility: 'all sessions' } : {}),
  }
}

/** `list`: the session's tasks, the newest that fit the budget, and how many older ones were left out. */
export function list(tasks: readonly TaskInfo[], budget: number): ToolResult {
  const fitted = fitBackward(tasks.map(summary), budget, ESCAPING)
  const elided = tasks.length - fitted.values.length
  return answer({ processes: fitted.values, ...(elided > 0 ? { elided } : {}) })
}

/** `running`, `exited (0)`, `exited (SIGKILL)`, `failed: lost on restart`, `restarting (2)`, ... */
export function statusOf(lifecycle: Lifecycle): string {
  switch (lifecycle.status) {
    case 'exited':
      return `exited (${lifecycle.code ?? lifecycle.signal})`
    case 'failed':
      return `failed: ${lifecycle.why}`
    case 'restarting':
      return `restarting (${lifecycle.n})`
    default:
      return lifecycle.status
  }
}

function age(task: TaskInfo): string {
  const end = task.endedAt?.getTime() ?? Date.now()
  const seconds = Math.max(0, Math.round((end - task.startedAt.getTime()) / 1000))
  if (seconds < 120) return `${seconds}s`
  if (seconds < 7200) return `${Math.round(seconds / 60)}m`
  return `${Math.round(seconds / 3600)}h`
}
