/** A background shell taken as a task (MCP Tasks, `ToolCallContext.asTask`). */
import type { ProcessExit } from '@toolvisor/process-runtime'
import type { TaskInfo } from '@toolvisor/tasks'
import { handedOver, type TaskHandover, type ToolCallContext, type ToolResult } from '@toolvisor/toolbox'
import { answer, type BashServices, taskDenial } from '../profiles/common.js'
import { renderRun, runEnd, spills } from './render.js'

/** The reader the task's answer reads with: the model's own `bash_output` cursor stays where it was. */
const TASK_READER = 'mcp-task'

/**
 * Hands a started background shell over as a task: answered at once; the task's answer, once it
 * ended, is `atEnd` of the ended task (a profile's own report), by default the run as a
 * foreground call would show it (the newest output within the bound).
 */
export function handOver(
  services: BashServices,
  task: TaskInfo,
  ctx: ToolCallContext,
  asTask: TaskHandover,
  atEnd?: (ended: TaskInfo) => ToolResult,
): ToolResult {
  const end = endOf(services, task).then((exit) => {
    if (atEnd !== undefined) return atEnd(services.tasks.get(task.id, ctx.sessionId))
    const read = services.tasks.readBytes(task.id, ctx.sessionId, {
      reader: TASK_READER,
      max: services.options.outputBytes,
      utf8: true,
    })
    // Its sandbox lines too (a denial, a blocked name's hint), as a foreground result shows them.
    const end = { ...runEnd(exit), sandbox: taskDenial(services, read.task) }
    return answer(renderRun(read, end, services.render), exit.code !== 0 || exit.signal !== null, {
      task: task.id,
      ...spills(read),
    })
  })
  asTask(task.id, end)
  return handedOver(task.id, task.tool)
}

/** When the task ends: its process's exit, or, for one still pending (decision 0105), its completion. */
function endOf(services: BashServices, task: TaskInfo): Promise<ProcessExit> {
  if (task.lifecycle.status !== 'pending') return services.tasks.process(task.id, task.owner).exit
  return new Promise((resolve) => {
    const off = services.tasks.onDone((completion) => {
      if (completion.task.id !== task.id) return
      off()
      resolve(completion.exit)
    })
  })
}
