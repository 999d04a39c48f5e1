import type { ArgSpec, DescribeService, ToolSpec } from '@toolvisor/describe-v2'
import { ArgumentError } from '@toolvisor/describe-v2'
import type {
  ManagedProcess,
  PreparedTool,
  ProcessExit,
  ProcessRuntime,
  RunContext,
  SequencedEvent,
  TaskRegistry,
} from '@toolvisor/process-runtime'
import {
  emptyResult,
  eventLine,
  eventValue,
  exitMeta,
  failure,
  stdoutText,
  succeeded,
  text,
  truncationNote,
} from './results.js'
import type { Tool, ToolCallContext, ToolResult } from './types.js'

/** A tool loaded from its executable: what `describe` said and what `prepare` checked. */
export interface LoadedTool {
  readonly spec: ToolSpec
  readonly prepared: PreparedTool
  /** How `describe` and `help` run: confined when a sandbox mechanism is configured. */
  readonly confined: PreparedTool
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
}

/** The model-facing tools of a loaded tool: itself, or one per sub-command when it has `commands`. */
export function toolsOf(loaded: LoadedTool, deps: BinaryToolDeps, options: CallOptions): Tool[] {
  const { spec } = loaded
  if (spec.commands.length === 0)
    return [makeTool(loaded, deps, options, spec.slug, spec.description, spec.args)]
  return spec.commands.map((command) =>
    makeTool(loaded, deps, options, command.internalName, command.description, command.args, command.name),
  )
}

function makeTool(
  loaded: LoadedTool,
  deps: BinaryToolDeps,
  options: CallOptions,
  name: string,
  description: string,
  args: readonly ArgSpec[],
  command?: string,
): Tool {
  return {
    name,
    description,
    inputSchema: deps.describe.inputSchema(args) as unknown as Tool['inputSchema'],
    call: (values, ctx) => callBinary(loaded, deps, options, name, args, values, ctx, command),
  }
}

function contextOf(ctx: ToolCallContext): RunContext {
  return {
    ...(ctx.sessionId !== undefined ? { sessionId: ctx.sessionId } : {}),
    ...(ctx.turnId !== undefined ? { turnId: ctx.turnId } : {}),
    ...(ctx.conversationId !== undefined ? { conversationId: ctx.conversationId } : {}),
    ...(ctx.agentId !== undefined ? { agentId: ctx.agentId } : {}),
  }
}

async function callBinary(
  loaded: LoadedTool,
  deps: BinaryToolDeps,
  options: CallOptions,
  name: string,
  args: readonly ArgSpec[],
  values: unknown,
  ctx: ToolCallContext,
  command: string | undefined,
): Promise<ToolResult> {
  let rendered: ReturnType<DescribeService['render']>
  try {
    rendered = deps.describe.render(args, values, command === undefined ? {} : { command })
  } catch (error) {
    if (ArgumentError.is(error)) return text(`${name}: ${error.message}; the tool was not run`, true)
    throw error
  }
  let count = 0
  const report = ctx.progress
  const progress = report
    ? (event: SequencedEvent) =>
        report({ progress: ++count, message: eventLine(event), event: eventValue(event.value) })
    : undefined
  const start = {
    tool: loaded.prepared,
    argv: rendered.argv,
    stdin: rendered.stdin,
    env: rendered.env,
    context: contextOf(ctx),
  }
  if (loaded.spec.process.mode === 'stream') return callStream(deps, options, name, start, ctx, progress)

  const framing = loaded.spec.process.output.framing
  const collector = framing === 'chunks' ? undefined : new EventCollector(deps.runtime.options.resultBytes)
  const process = deps.runtime.start({
    ...start,
    signal: ctx.signal,
    onEvent: (event) => {
      collector?.add(event)
      progress?.(event)
    },
  })
  const exit = await process.exit
  if (!succeeded(exit)) return failure(name, process, exit)
  return oneshotResult(loaded.spec, process, exit, collector)
}

/** Oneshot results (ruling 9): jsonl a JSON array, lines joined, chunks as stdout; `empty-result` on 0 bytes. */
function oneshotResult(
  spec: ToolSpec,
  process: ManagedProcess,
  exit: ProcessExit,
  collector: EventCollector | undefined,
): ToolResult {
  const stdout = process.stdout()
  const meta = exitMeta(process, exit)
  if (stdout.totalBytes === 0) return text(emptyResult(spec), false, meta)
  if (collector === undefined) {
    const body = stdoutText(stdout.head)
    const note = stdout.truncated
      ? `\n${truncationNote(`showing the first ${stdout.head.length}`, stdout)}`
      : ''
    return text(body + note, false, meta)
  }
  const note = collector.elided > 0 ? `\n${elisionNote(collector, stdout.spillPath)}` : ''
  if (spec.process.output.framing === 'lines') {
    return text((collector.events as string[]).join('\n') + note, false, meta)
  }
  return {
    ...text(JSON.stringify(collector.events) + note, false, meta),
    structuredContent: {
      events: collector.events,
      ...(collector.elided > 0 ? { elided: collector.elided } : {}),
    },
  }
}

function elisionNote(collector: EventCollector, spill: string | undefined): string {
  const where = spill ? `; every byte of output is in ${spill}` : ''
  return `[${collector.elided} more events elided: a result holds ${collector.budget} bytes at most${where}]`
}

/** Keeps events for a result until a byte budget is spent, then counts the rest. */
class EventCollector {
  readonly events: unknown[] = []
  elided = 0
  #spent = 0

  constructor(readonly budget: number) {}

  add(event: SequencedEvent): void {
    const value = eventValue(event.value)
    const size = typeof value === 'string' ? value.length + 1 : JSON.stringify(value).length + 1
    if (this.elided > 0 || this.#spent + size > this.budget) {
      this.elided++
      return
    }
    this.#spent += size
    this.events.push(value)
  }
}

/**
 * A stream call is a task: the caller waits up to the yield window; a finished task answers with
 * its last events, a running one with a placeholder that says how to follow it. Every event is
 * reported as progress while the call is open.
 */
async function callStream(
  deps: BinaryToolDeps,
  options: CallOptions,
  name: string,
  start: Parameters<ProcessRuntime['start']>[0],
  ctx: ToolCallContext,
  progress: ((event: SequencedEvent) => void) | undefined,
): Promise<ToolResult> {
  let forward = progress
  // The task outlives the call: the call's signal cancels it only while the call is open.
  const process = deps.runtime.start({ ...start, onEvent: (event) => forward?.(event) })
  const task = deps.tasks.add({
    kind: 'stream',
    tool: name,
    process,
    ...(ctx.sessionId !== undefined ? { owner: ctx.sessionId } : {}),
  })
  const outcome = await new Promise<'exit' | 'yield' | 'cancelled'>((resolve) => {
    const timer = setTimeout(() => settle('yield'), options.yieldMs)
    const onAbort = () => settle('cancelled')
    function settle(result: 'exit' | 'yield' | 'cancelled') {
      clearTimeout(timer)
      ctx.signal.removeEventListener('abort', onAbort)
      resolve(result)
    }
    if (ctx.signal.aborted) return settle('cancelled')
    ctx.signal.addEventListener('abort', onAbort, { once: true })
    void process.exit.then(() => settle('exit'))
  })
  forward = undefined
  if (outcome === 'cancelled') {
    const exit = await process.stop({ reason: 'cancelled' })
    return failure(name, process, exit)
  }
  if (outcome === 'yield') return placeholder(task.id, name, options.yieldMs)
  const exit = await process.exit
  const total = process.counters().events
  const events = process.tail(options.streamResultEvents).map((event) => eventValue(event.value))
  const elided = total - events.length
  const note =
    elided > 0
      ? `\n[${elided} earlier events elided; the task keeps them: processes tail with n up to ${total}]`
      : ''
  const body = `${JSON.stringify(events)}${note}`
  const meta = { ...exitMeta(process, exit), task: task.id }
  if (!succeeded(exit)) {
    const failed = failure(name, process, exit)
    return { ...failed, content: [...failed.content, { type: 'text', text: `events: ${body}` }], meta }
  }
  return { ...text(body, false, meta), structuredContent: { events, elided, task: task.id } }
}

/** The answer of a stream call still running at the end of the yield window. */
export function placeholder(task: string, tool: string, yieldMs: number): ToolResult {
  const message =
    `still running after ${yieldMs / 1000} s; its events arrive as progress. ` +
    `Follow it with processes {"command":"tail","process":"${task}"}, ` +
    `check it with {"command":"status","process":"${task}"}, stop it with {"command":"stop","process":"${task}"}.`
  const body = { status: 'running', task, tool, message }
  return { ...text(JSON.stringify(body)), structuredContent: body, meta: { task } }
}
