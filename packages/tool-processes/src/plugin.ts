import { definePlugin } from '@toolvisor/kernel'
import { TasksToken } from '@toolvisor/process-runtime'
import { ToolsToken } from '@toolvisor/toolbox'
import { processesTool } from './processes-tool.js'

/** Registers the shared `processes` tool into `tools`, over `tasks`. */
export const processesPlugin = definePlugin({
  name: 'tool-processes',
  inject: { tools: ToolsToken, tasks: TasksToken },
  apply(ctx) {
    const unregister = ctx.deps.tools.register(processesTool(ctx.deps.tasks))
    ctx.onDispose(unregister)
  },
})
