import type { ReadBack, ReadBackOf } from '@toolvisor/answers'
import { eventValue, fitBackward, type Renderer, rendererFor } from '@toolvisor/answers'
import type { KeptRecord, ManagedProcess, ProcessRuntime } from '@toolvisor/process-runtime'
import type { TaskRegistry } from '@toolvisor/tasks'
import { argvLabel } from './argv-label.js'
import type { LoadedTool } from './binary-tool.js'
import type { ModeCall, ModeHandler } from './modes.js'
import { exitMeta, failure, networkNote, succeeded, text } from './results.js'
import type { ToolCallContext, ToolResult } from './types.js'

/** How stream calls answer. */
export interface StreamOptions {
  /** How long a stream call waits before answering with a running placeholder (ms). */
  readonly yieldMs: number
  /** Events a finished stream call's result keeps at most (the last ones). */
  readonly streamResultEvents: number
  /** The words of the calls that read a task back (none: answers do not say how). */
  readonly readBack?: ReadBackOf
}

/**
 * The `stream` mode: a call is a task owned by the calling session. The caller waits up to the
 * yield window; a finished task answers with its last events (within the byte budget), a running
 * one with a placeholder that says how to follow it. Every event is progress while the call is open.
 */
export function streamHandler(
  deps: { readonly runtime: ProcessRuntime; readonly tasks: TaskRegistry },
  options: StreamOptions,
): ModeHandler {
  return {
    async call(call) {
      let forward = call.progress
      // The task outlives the call: the call's signal cancels it only while the call is open.
      // Kept past the daemon when it keeps (serve --keep-processes, decision 0113); never on a terminal.
      const keep = call.start.terminal === undefined
      const process = deps.runtime.start({ ...call.start, onEvent: (event) => forward?.(event), keep })
      const task = deps.tasks.add({
        kind: 'stream',
        tool: call.name,
        label: argvLabel(call.start.argv),
        process,
        ...(call.ctx.sessionId !== undefined ? { owner: call.ctx.sessionId } : {}),
      })
      const render = rendererFor(call.rules.keepControls)
      const readBack = options.readBack?.()
      if (call.ctx.asTask !== undefined) {
        // Taken as a task: answered now; the answer at its end is the caller's through the handover.
        forward = undefined
        const answer = process.exit.then(() =>
          finished({ process, task: task.id, call, options, render, readBack }),
        )
        call.ctx.asTask(task.id, answer)
        return handedOver(task.id, call.name)
      }
      // A task told as running is running: its launch (a fraction of a millisecond) is done.
      await process.launched
      const outcome = await yieldWindow(process.exit, call.ctx, options.yieldMs)
      forward = undefined
      if (outcome === 'cancelled') {
        const exit = await process.stop({ reason: 'cancelled' })
        return failure(call.name, process, exit, { render, readAs: task.id, readBack })
      }
      if (outcome === 'yield') {
        deps.tasks.detach(task.id)
        return placeholder(task.id, call.name, options.yieldMs, readBack)
      }
      return finished({ process, task: task.id, call, options, render, readBack })
    },
    adopt: (record, loaded) => adoptStream(deps, record, loaded),
    tasks: true,
  }
}

/** Takes a kept stream an earlier daemon started back (decision 0113): its task under the same id, owner and cursors. */
function adoptStream(
  deps: { readonly runtime: ProcessRuntime; readonly tasks: TaskRegistry },
  record: KeptRecord,
  loaded: LoadedTool,
): void {
  const { task, session } = record
  if (task === undefined) throw new Error(`kept stream ${record.tool} (pid ${record.pid}) names no task`)
  const start = { tool: loaded.prepared, argv: record.argv ?? [], ...(record.cwd ? { cwd: record.cwd } : {}) }
  const process = deps.runtime.adopt(record, start)
  deps.tasks.add({
    kind: 'stream',
    tool: loaded.spec.slug,
    ...(record.argv ? { label: argvLabel(record.argv) } : {}),
    id: task,
    start: () => process,
    ...(session !== undefined ? { owner: session } : {}),
    ...(record.cursors ? { cursors: record.cursors } : {}),
    ...(record.byteCursors ? { byteCursors: record.byteCursors } : {}),
  })
  deps.tasks.detach(task)
}

interface Ended {
  readonly process: ManagedProcess
  readonly task: string
  readonly call: ModeCall
  readonly options: StreamOptions
  readonly render: Renderer
  readonly readBack: ReadBack | undefined
}

/** The answer of a stream call that ended in its window: its last events, within the budget. */
async function finished({ process, task, call, options, render, readBack }: Ended): Promise<ToolResult> {
  const exit = await process.exit
  const meta = { ...exitMeta(process, exit), task }
  const failed = succeeded(exit)
    ? undefined
    : failure(call.name, process, exit, { render, readAs: task, readBack })
  const used = failed === undefined ? 0 : Buffer.byteLength(failed.content.map((c) => c.text).join('\n'))
  const budget = Math.max(0, call.rules.resultBytes - used)
  const total = process.output.counters().events
  const last = process.output.tail(options.streamResultEvents).map((event) => eventValue(event.value))
  const fitted = fitBackward(last, budget, render)
  const elided = total - fitted.values.length
  const note =
    elided > 0
      ? `\n${earlierNote(task, elided, options.streamResultEvents, call.rules.resultBytes, readBack)}`
      : ''
  const body = `[${fitted.pieces.join(',')}]${note}`
  if (failed !== undefined)
    return { ...failed, content: [...failed.content, { type: 'text', text: `events: ${body}` }], meta }
  return {
    ...text(`${body}${networkNote(process)}`, false, meta),
    structuredContent: { events: fitted.values, elided, task },
  }
}

function earlierNote(
  task: string,
  elided: number,
  events: number,
  budget: number,
  readBack: ReadBack | undefined,
): string {
  const page = readBack?.call({ command: 'page', process: task, offset: 0 })
  return (
    `[${elided} earlier events elided (a result holds the last ${events} events ` +
    `and ${budget} bytes at most); the task keeps them${page ? `: page them with ${page}` : ''}]`
  )
}

/** Waits for the end of the process, the end of the window, or the caller's cancel. */
function yieldWindow(
  exit: Promise<unknown>,
  ctx: ToolCallContext,
  yieldMs: number,
): Promise<'exit' | 'yield' | 'cancelled'> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => settle('yield'), yieldMs)
    const onAbort = () => settle('cancelled')
    function settle(result: 'exit' | 'yield' | 'cancelled') {
      clearTimeout(timer)
      ctx.signal.removeEventListener('abort', onAbort)
      resolve(result)
    }
    if (ctx.signal.aborted) return settle('cancelled')
    ctx.signal.addEventListener('abort', onAbort, { once: true })
    void exit.then(() => settle('exit'))
  })
}

/** The answer of a stream call still running at the end of the yield window. */
export function placeholder(
  task: string,
  tool: string,
  yieldMs: number,
  readBack: ReadBack | undefined,
): ToolResult {
  const follow = readBack
    ? ` Read them with ${readBack.call({ command: 'read', process: task })} (each read goes on where the last ended), ` +
      `check it with ${readBack.args({ command: 'status', process: task })}, ` +
      `stop it with ${readBack.args({ command: 'stop', process: task })}.`
    : ''
  const message = `still running after ${yieldMs / 1000} s; its events arrive as progress.${follow}`
  const body = { status: 'running', task, tool, message }
  return { ...text(JSON.stringify(body)), structuredContent: body, meta: { task } }
}

/**
 * The answer of a call handed over as a task (`ToolCallContext.asTask`): it runs as `task`; the
 * caller follows it through the task, not through this answer.
 */
export function handedOver(task: string, tool: string): ToolResult {
  const body = { status: 'running', task, tool }
  return { ...text(JSON.stringify(body)), structuredContent: body, meta: { task } }
}
