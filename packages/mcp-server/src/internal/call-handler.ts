import {
  type CallToolRequest,
  type CallToolResult,
  CLIENT_CAPABILITIES_META_KEY,
  type CreateTaskResult,
  type InputRequiredResult,
  ProtocolError,
  ProtocolErrorCode,
  SdkError,
  SdkErrorCode,
  type ServerContext,
} from '@modelcontextprotocol/server'
import { foldMail } from '@toolvisor/answers'
import type { TaskRegistry } from '@toolvisor/tasks'
import type { ConnectionId, ToolCallContext, ToolRegistry, ToolResult } from '@toolvisor/toolbox'
import { type McpApprovals, roundsOf } from '../approval.js'
import { CallGate } from './call-gate.js'
import type { ProtocolEra } from './era.js'
import type { SessionMailOptions } from './mail.js'
import type { Limits } from './options.js'
import { CallProgress } from './progress.js'
import { errorResult, messageOf, PROGRESS_META_KEY, toCallToolResult, withPresentation } from './result.js'
import { mcpTask, type TaskAnswers } from './tasks.js'
import { declaresTasks, extensionTask } from './tasks-extension.js'

/** What every call of one connection shares. */
export interface CallHandlerOptions {
  readonly tools: ToolRegistry
  readonly sessionId: string
  /** The connection every call comes in on (`ctx.connection`): where its approvals are asked. */
  readonly connection: ConnectionId
  /** Logs one line (already prefixed with the server name). */
  readonly log: (line: string) => void
  readonly limits: Limits
  /** The session's mail, folded into each result (absent: none). */
  readonly mail: SessionMailOptions | undefined
  /** The registry MCP tasks are views of, and the answers handed over (absent: no MCP tasks). */
  readonly tasks: { readonly registry: TaskRegistry; readonly answers: TaskAnswers } | undefined
  /**
   * A 2026-07-28 connection's approvals: each call is a round of its own, whose escalation is asked
   * by answering `input_required` (absent: a 2025 connection, asked inside the call, or none).
   */
  readonly rounds: McpApprovals | undefined
  /** The revision the connection speaks: how a call is taken as a task, and what a task looks like. */
  readonly era: ProtocolEra
}

/**
 * The `tools/call` handler: runs the call with the connection's session, the client's cancellation
 * and, when the client sent a progress token, progress notifications; a result whose progress was
 * not all sent says so in `_meta["toolvisor/progress"]`.
 */
export function callHandler(options: CallHandlerOptions) {
  const gate = new CallGate(options.limits)
  return async (
    request: CallToolRequest,
    ctx: ServerContext,
  ): Promise<CallToolResult | CreateTaskResult | InputRequiredResult> => {
    const name = request.params.name
    // Refused before it takes a place: a tool that never runs as a task.
    if (request.params.task !== undefined) taskRefusal(options, name)
    const { running, waiting } = gate.load
    const entered = await gate.enter(ctx.mcpReq.signal)
    // Aborted while waiting: the client gets no answer (MCP cancellation), so none is built.
    if (entered === 'aborted') return errorResult(`tool "${name}" was cancelled before it ran`)
    if (entered === 'refused') return errorResult(refusal(name, running, waiting, options.limits))
    try {
      if (request.params.task !== undefined)
        return await callAsTask(options, request, ctx, options.connection)
      return await withRound(options, request, ctx, (connection) =>
        takenAsTask(options, name, ctx)
          ? callAsTask(options, request, ctx, connection)
          : callOnce(options, request, ctx, connection),
      )
    } finally {
      entered()
    }
  }
}

/**
 * Whether a 2026-07-28 call is taken as a task of the Tasks extension: the server decides, and it
 * takes every call of a tool that may run as one (`taskSupport: "optional"`: a stream, a service
 * start, bash) whose request declares the extension (decision 0109, point 5).
 */
function takenAsTask(options: CallHandlerOptions, name: string, ctx: ServerContext): boolean {
  return (
    options.era === 'modern' &&
    options.tasks !== undefined &&
    declaresTasks(ctx) &&
    options.tools.get(name)?.taskSupport === 'optional'
  )
}

/**
 * Runs `call` with the connection its approvals are asked on: a 2026-07-28 call's own round (its
 * answer is `input_required` when the tool asked and was not answered), else the connection's.
 */
async function withRound<R>(
  options: CallHandlerOptions,
  request: CallToolRequest,
  ctx: ServerContext,
  call: (connection: ConnectionId) => Promise<R>,
): Promise<R | InputRequiredResult> {
  const opened =
    options.rounds &&
    roundsOf(options.rounds).open({
      sessionId: options.sessionId,
      tool: request.params.name,
      args: request.params.arguments ?? {},
      requestState: ctx.mcpReq.requestState(),
      inputResponses: ctx.mcpReq.inputResponses,
      canElicit: canElicit(ctx),
    })
  try {
    const result = await call(opened?.round.connection ?? options.connection)
    return opened?.round.settle() ?? result
  } finally {
    opened?.close()
  }
}

/** Whether a 2026-07-28 request declares form elicitation in its capabilities. */
function canElicit(ctx: ServerContext): boolean {
  const envelope = ctx.mcpReq.envelope as
    | Record<string, { elicitation?: { form?: object } } | undefined>
    | undefined
  const elicitation = envelope?.[CLIENT_CAPABILITIES_META_KEY]?.elicitation
  // A client that declares elicitation without naming a mode supports forms (the spec's default).
  return (
    elicitation !== undefined && (elicitation.form !== undefined || Object.keys(elicitation).length === 0)
  )
}

/** One call that got its place, run with the connection its approvals are asked on. */
async function callOnce(
  options: CallHandlerOptions,
  request: CallToolRequest,
  ctx: ServerContext,
  connection: ConnectionId,
): Promise<CallToolResult> {
  const name = request.params.name
  const token = ctx.mcpReq._meta?.progressToken
  const progress =
    token === undefined
      ? undefined
      : new CallProgress({
          token,
          send: (notification) => ctx.mcpReq.notify(notification),
          signal: ctx.mcpReq.signal,
          log: (line) => options.log(`tool "${name}": ${line}`),
          perSecond: options.limits.progressPerSecond,
          burst: options.limits.progressBurst,
        })
  const call: ToolCallContext = {
    sessionId: options.sessionId,
    connection,
    signal: toolSignal(ctx.mcpReq.signal),
    ...(progress ? { progress: progress.report } : {}),
  }
  const result = withMail(await runCall(options, name, request.params.arguments ?? {}, call), options, ctx)
  const count = await progress?.count()
  return count ? { ...result, _meta: { ...result._meta, [PROGRESS_META_KEY]: count } } : result
}

/** The refusal of a task-augmented call by a server that runs no tool as a task. */
export const NO_TASKS = 'this server runs no tool as a task; call it without "task"'

/** Throws the protocol's refusal of a task-augmented call the server cannot take as a task. */
function taskRefusal(options: CallHandlerOptions, name: string): void {
  if (options.tasks === undefined) {
    throw new ProtocolError(ProtocolErrorCode.MethodNotFound, NO_TASKS)
  }
  // An unknown tool is answered by the registry, which names the tools that exist.
  const tool = options.tools.get(name)
  if (tool !== undefined && tool.taskSupport !== 'optional') {
    throw new ProtocolError(
      ProtocolErrorCode.MethodNotFound,
      `tool "${name}" does not run as a task (its execution.taskSupport is "forbidden"); call it without "task"`,
    )
  }
}

/**
 * A call taken as a task: the tool registers its task and hands it over; the answer is the task,
 * whose answer `tasks/result` (2025) or `tasks/get` (the 2026 extension) gives once it ended. A tool
 * that answers without a task (it refused the call) is a protocol error with its text in 2025, and
 * its own complete result in 2026, where the server decides whether a call is a task.
 */
async function callAsTask(
  options: CallHandlerOptions,
  request: CallToolRequest,
  ctx: ServerContext,
  connection: ConnectionId,
): Promise<CreateTaskResult | CallToolResult> {
  const tasks = options.tasks!
  const name = request.params.name
  let handed: { readonly task: string; readonly answer: Promise<ToolResult> } | undefined
  const call: ToolCallContext = {
    sessionId: options.sessionId,
    connection,
    signal: toolSignal(ctx.mcpReq.signal),
    asTask: (task, answer) => {
      handed = { task, answer }
    },
  }
  const result = await runCall(options, name, request.params.arguments ?? {}, call)
  if (handed === undefined && options.era === 'modern') return result
  if (handed === undefined) {
    const said = result.content.map((item) => ('text' in item ? item.text : '')).join('\n')
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `tool "${name}" started no task: ${said}`)
  }
  tasks.answers.keep(options.sessionId, handed.task, handed.answer)
  const info = tasks.registry.get(handed.task, options.sessionId)
  // The SDK's own result types know only the 2025 shape; the extension's is written by hand.
  if (options.era === 'modern')
    return { resultType: 'task', ...extensionTask(info) } as unknown as CreateTaskResult
  return { task: mcpTask(info) }
}

/**
 * The result with the session's pending mail after the tool's own content. A cancelled call's
 * result never reaches the client, so it delivers nothing: the mail waits for the next one.
 */
function withMail(result: CallToolResult, options: CallHandlerOptions, ctx: ServerContext): CallToolResult {
  if (options.mail === undefined || ctx.mcpReq.signal.aborted) return result
  const { mailbox, sessionId, mailBytes, readBack } = options.mail
  // The one fold every surface calls (toolbox's), at most mailBytes of the session's mail.
  const blocks = foldMail(mailbox, sessionId, { maxBytes: mailBytes, readBack })
  if (blocks.length === 0) return result
  return {
    ...result,
    content: [...result.content, ...blocks.map((text) => ({ type: 'text' as const, text }))],
  }
}

/**
 * The signal a tool gets: aborted with the client's reason when the client cancels, and plainly
 * (an `AbortError`) when the connection closes, where the SDK gives its own "Connection closed"
 * error as the reason, which is no reason a tool could act on.
 */
function toolSignal(signal: AbortSignal): AbortSignal {
  const controller = new AbortController()
  const follow = (): void => {
    const closed = SdkError.isInstance(signal.reason) && signal.reason.code === SdkErrorCode.ConnectionClosed
    controller.abort(...(closed ? [] : [signal.reason]))
  }
  if (signal.aborted) follow()
  else signal.addEventListener('abort', follow, { once: true })
  return controller.signal
}

function refusal(name: string, running: number, waiting: number, limits: Limits): string {
  return `tool "${name}" was not run: this session already has ${running} calls running and ${waiting} waiting (maxConcurrentCalls ${limits.maxConcurrentCalls}, maxQueuedCalls ${limits.maxQueuedCalls}); retry when one of them has finished`
}

/** Runs one call; a rejecting tool becomes an `isError` result and a log line, never a throw. */
async function runCall(
  { tools, log }: CallHandlerOptions,
  name: string,
  args: Record<string, unknown>,
  ctx: ToolCallContext,
): Promise<CallToolResult> {
  // The registry dispatches (it accepts the safe name and owns the "unknown tool" text); the lookup
  // only names the tool in logs by its internal name.
  const tool = tools.get(name)
  const label = tool?.name ?? name
  try {
    const answer = await tools.call(name, args, ctx)
    return withPresentation(toCallToolResult(answer), tool, args, answer)
  } catch (error) {
    if (ctx.signal.aborted) {
      log(`tool "${label}" rejected after the call was cancelled: ${messageOf(error)}`)
    } else {
      log(`tool "${label}" rejected (a bug: tools answer failures with isError): ${stackOf(error)}`)
    }
    return errorResult(`tool "${name}" failed inside toolvisor: ${messageOf(error)}`)
  }
}

function stackOf(error: unknown): string {
  return error instanceof Error && error.stack ? error.stack : messageOf(error)
}
