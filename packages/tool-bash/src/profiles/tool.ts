/** The shape of every tool of the three profiles: arguments declared once, refusals as results. */
import { RuntimeError } from '@toolvisor/process-runtime'
import { TasksError } from '@toolvisor/tasks'
import { TerminalError } from '@toolvisor/terminal'
import {
  type ArgsOf,
  argsSchema,
  type CallCard,
  declareArgs,
  type Fields,
  type ResultCard,
  type Tool,
  type ToolCallContext,
  type ToolResult,
} from '@toolvisor/toolbox'
import { BashError } from '../errors.js'
import { BASH_ARGS } from '../internal/args.js'
import { ANNOTATIONS } from '../present.js'
import { answer } from './common.js'

/** How a tool of this package is declared: its arguments as `Fields` (of `args.ts`), its run on checked ones. */
export interface BashToolSpec<F extends Fields> {
  readonly name: string
  readonly description: string
  readonly fields: F
  /** The fields the model is shown, when fewer are advertised than taken (default: `fields`). */
  readonly shown?: Fields
  presentCall?(args: unknown): CallCard
  presentResult?(args: unknown, result: ToolResult): ResultCard
  /** `optional`: a call may run as a task (`ToolCallContext.asTask`); the run hands it over. */
  readonly taskSupport?: 'optional'
  run(args: ArgsOf<F>, ctx: ToolCallContext): Promise<ToolResult>
}

/**
 * A tool: arguments checked against its fields, and every refusal (a bad argument, another
 * session's task, an unknown id, a taken name) an `isError` result with its message.
 */
export function bashTool<F extends Fields>(spec: BashToolSpec<F>): Tool {
  const args = declareArgs(spec.fields, BASH_ARGS)
  return {
    name: spec.name,
    description: spec.description,
    inputSchema: spec.shown ? argsSchema(spec.shown) : args.schema,
    ...(ANNOTATIONS[spec.name] ? { annotations: ANNOTATIONS[spec.name] } : {}),
    ...(spec.presentCall ? { presentCall: spec.presentCall } : {}),
    ...(spec.presentResult ? { presentResult: spec.presentResult } : {}),
    ...(spec.taskSupport ? { taskSupport: spec.taskSupport } : {}),
    async call(raw, ctx) {
      const parsed = args.parse(raw)
      if ('problem' in parsed) return answer(parsed.problem, true)
      try {
        return await spec.run(parsed.value, ctx)
      } catch (error) {
        const ours = BashError.is(error) || RuntimeError.is(error) || TasksError.is(error)
        if (ours || TerminalError.is(error)) return answer(error.message, true)
        throw error
      }
    },
  }
}
