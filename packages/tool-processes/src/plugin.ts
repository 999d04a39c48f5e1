import { definePlugin } from '@toolvisor/kernel'
import { RuntimeToken, TasksToken } from '@toolvisor/process-runtime'
import { OneshotsToken, ToolsToken } from '@toolvisor/toolbox'
import { z } from 'zod'
import { processesTool } from './processes-tool.js'

const positive = z.number().int().positive()

/** The operator's bounds of the `processes` tool. */
export const ProcessesConfig = z
  .object({
    /** The most bytes an answer holds; default: the runtime's `resultBytes` (256 KiB). */
    resultBytes: positive.optional(),
    /** The most events one tail, read or page returns (the tail cap). */
    maxEvents: positive.default(1000),
    /** How many of the last events and stderr lines `status` shows. */
    statusEvents: positive.default(10),
    statusStderrLines: positive.default(10),
  })
  .strict()
  .prefault({})

/** Registers the shared `processes` tool into `tools`, over `tasks` and the kept `oneshots`. */
export const processesPlugin = definePlugin({
  name: 'tool-processes',
  inject: { tools: ToolsToken, tasks: TasksToken, runtime: RuntimeToken, oneshots: OneshotsToken },
  config: ProcessesConfig,
  apply(ctx, config) {
    const { tools, tasks, runtime, oneshots } = ctx.deps
    const options = { ...config, resultBytes: config.resultBytes ?? runtime.options.resultBytes }
    const unregister = tools.register(processesTool(tasks, oneshots, options))
    ctx.onDispose(unregister)
  },
})
