import { eventValue, rendererFor } from '@toolvisor/answers'
import type { ArgSpec, DescribeService, ToolSpec } from '@toolvisor/describe-v2'
import { ArgumentError } from '@toolvisor/describe-v2'
import type {
  PreparedTool,
  ProcessRuntime,
  RunContext,
  SequencedEvent,
  TerminalSize,
} from '@toolvisor/process-runtime'
import { ensureSession, type Sessions, type TaskRegistry, TasksError } from '@toolvisor/tasks'
import type { ModeCall, ModeStart, Modes, ResultRules } from './modes.js'
import { eventLine, text } from './results.js'
import type { Tool, ToolCallContext, ToolResult } from './types.js'

/** A tool loaded from its executable: what `describe` said and what `prepare` checked. */
export interface LoadedTool {
  readonly spec: ToolSpec
  readonly prepared: PreparedTool
  /** How `describe` and `help` run: confined when a sandbox mechanism is configured. */
  readonly confined: PreparedTool
  /** The SHA-256 of the describe document, hex: part of what a check result is cached under. */
  readonly describeHash: string
  /** The operator keeps this tool's terminal control codes raw (default: escaped, decision 0013). */
  readonly keepControls: boolean
  /**
   * The arguments the operator's `allowDash` lets take a value that starts with `-` (`name`, or
   * `command.name`; decision 0099): already set on `spec`, listed for `toolvisor check`.
   */
  readonly allowDash: readonly string[]
}

/** What binary tools need to run. */
export interface BinaryToolDeps {
  readonly describe: DescribeService
  readonly runtime: ProcessRuntime
  readonly tasks: TaskRegistry
}

/** How calls are shaped. */
export interface CallOptions {
  /** How long a stream call waits before answering with a running placeholder (ms). */
  readonly yieldMs: number
  /** Events a finished stream call's result keeps (the last ones). */
  readonly streamResultEvents: number
  /** The most bytes a model-facing answer holds. */
  readonly resultBytes: number
}

/** What the model-facing tools of a loaded tool are built from. */
export interface ToolsOfOptions {
  readonly loaded: LoadedTool
  readonly describe: DescribeService
  readonly modes: Modes
  readonly resultBytes: number
  /** Where a call's session is opened when nobody opened it yet (absent: calls open nothing). */
  readonly sessions?: Sessions
}

/** One model-facing tool of a loaded tool: itself, or one of its sub-commands. */
interface MadeTool {
  readonly name: string
  readonly description: string
  readonly args: readonly ArgSpec[]
  readonly command?: string
}

/** The model-facing tools of a loaded tool: itself, or one per sub-command when it has `commands`. */
export function toolsOf(options: ToolsOfOptions): Tool[] {
  const { spec } = options.loaded
  if (spec.commands.length === 0)
    return [makeTool(options, { name: spec.slug, description: spec.description, args: spec.args })]
  return spec.commands.map((command) =>
    makeTool(options, {
      name: command.internalName,
      description: command.description,
      args: command.args,
      command: command.name,
    }),
  )
}

function makeTool(options: ToolsOfOptions, made: MadeTool): Tool {
  const tasks = options.modes.get(options.loaded.spec.process.mode)?.tasks === true
  return {
    name: made.name,
    description: made.description,
    inputSchema: options.describe.inputSchema(made.args) as unknown as Tool['inputSchema'],
    ...(tasks ? { taskSupport: 'optional' as const } : {}),
    call: (values, ctx) => callBinary({ ...options, made, values, ctx }),
  }
}

/** The context variables of a call (`AGENT_SESSION_ID`, ...), as every process it starts gets them. */
export function contextOf(ctx: ToolCallContext): RunContext {
  return {
    ...(ctx.sessionId !== undefined ? { sessionId: ctx.sessionId } : {}),
    ...(ctx.turnId !== undefined ? { turnId: ctx.turnId } : {}),
    ...(ctx.conversationId !== undefined ? { conversationId: ctx.conversationId } : {}),
    ...(ctx.agentId !== undefined ? { agentId: ctx.agentId } : {}),
  }
}

/** One call of a binary tool: the arguments checked and rendered, then the tool's mode runs it. */
interface BinaryCall extends ToolsOfOptions {
  readonly made: MadeTool
  readonly values: unknown
  readonly ctx: ToolCallContext
}

async function callBinary(call: BinaryCall): Promise<ToolResult> {
  const { loaded, made, ctx } = call
  let rendered: ReturnType<DescribeService['render']>
  try {
    rendered = call.describe.render(
      made.args,
      call.values,
      made.command === undefined ? {} : { command: made.command },
    )
  } catch (error) {
    if (ArgumentError.is(error)) return text(`${made.name}: ${error.message}; the tool was not run`, true)
    throw error
  }
  const refused = openedSession(call.sessions, ctx.sessionId)
  if (refused !== undefined) return text(`${made.name}: ${refused}; the tool was not run`, true)
  const mode = loaded.spec.process.mode
  const handler = call.modes.get(mode)
  if (handler === undefined)
    return text(`${made.name}: no handler runs ${mode} tools any more; the tool was not run`, true)
  const rules: ResultRules = { resultBytes: call.resultBytes, keepControls: loaded.keepControls }
  const modeCall: ModeCall = {
    name: made.name,
    loaded,
    start: {
      tool: loaded.prepared,
      argv: rendered.argv,
      stdin: rendered.stdin,
      context: contextOf(ctx),
      ...onTerminal(loaded.spec.process.terminal, rendered.env),
    },
    ctx,
    rules,
    progress: progressOf(ctx, rules),
  }
  return handler.call(modeCall)
}

/** Each event as a progress report, rendered as the tool's results are. */
function progressOf(ctx: ToolCallContext, rules: ResultRules): ModeCall['progress'] {
  const report = ctx.progress
  if (!report) return undefined
  const render = rendererFor(rules.keepControls)
  let count = 0
  return (event: SequencedEvent) =>
    report({ progress: ++count, message: eventLine(event, render), event: eventValue(event.value) })
}

/** Opens the call's session when nobody did; the refusal of an id that is not a session id. */
function openedSession(sessions: Sessions | undefined, id: string | undefined): string | undefined {
  if (sessions === undefined || id === undefined) return undefined
  try {
    ensureSession(sessions, id)
    return undefined
  } catch (error) {
    if (TasksError.is(error) && error.code === 'TASKS_ERR_BAD_SESSION_ID') return error.message
    throw error
  }
}

/**
 * A tool that declared a terminal runs on one, `TERM` saying which (the screen's emulator is an
 * xterm's) unless its arguments set it; else its arguments' environment as rendered.
 */
function onTerminal(
  terminal: TerminalSize | undefined,
  env: Readonly<Record<string, string>>,
): Pick<ModeStart, 'env' | 'terminal'> {
  if (terminal === undefined) return { env }
  return { env: { TERM: 'xterm-256color', ...env }, terminal }
}
