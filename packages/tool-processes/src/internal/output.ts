import { fitBytes, IN_JSON } from '@toolvisor/answers'
import type { ProcessOutputView } from '@toolvisor/process-runtime'
import { spillCutText } from '@toolvisor/process-runtime'
import { type TaskRegistry, TasksError } from '@toolvisor/tasks'
import type { Oneshots, ToolResult } from '@toolvisor/toolbox'
import { answer } from '../answers.js'

/** Room an output answer keeps for its fields around the text. */
const ENVELOPE = 256

/** What `output` reads from. */
export interface OutputContext {
  readonly tasks: TaskRegistry
  readonly oneshots: Oneshots
  readonly session: string | undefined
  readonly resultBytes: number
}

/** What `output` was asked for. */
export interface OutputRequest {
  readonly process: string
  readonly stream: 'stdout' | 'stderr'
  readonly offset: number
  readonly length: number
}

/**
 * The output of the process behind a task id (`t1`) or a cut oneshot call (`proc-3`, from its
 * result), with the ownership fence of either: another session's is refused with the one stable text.
 */
function outputOf(context: OutputContext, id: string): ProcessOutputView {
  try {
    return context.tasks.process(id, context.session).output
  } catch (error) {
    if (!TasksError.is(error) || error.code !== 'TASKS_ERR_UNKNOWN_TASK') throw error
    return context.oneshots.get(id, context.session).output
  }
}

/**
 * `output`: `length` bytes of a process's stdout or stderr from `offset`, as text (UTF-8, cut at a
 * character, control codes escaped) or base64, within the answer budget; `next` is where to go on.
 */
export function output(context: OutputContext, request: OutputRequest): ToolResult {
  const processOutput = outputOf(context, request.process)
  const captured = request.stream === 'stdout' ? processOutput.stdout() : processOutput.stderr()
  const length = Math.min(request.length, context.resultBytes - ENVELOPE)
  // The runtime's read: from memory what is still there (the head, a staged spill write), else the file.
  const bytes = processOutput.bytes(request.stream, request.offset, length)
  if (bytes.length === 0 && request.offset < captured.totalBytes) {
    const cut = captured.spillCut
    const newest = captured.totalBytes - captured.tail.length
    const error =
      cut !== undefined && request.offset >= cut.kept
        ? `bytes ${request.offset} on of ${request.process} ${request.stream} are past what its spill file kept (${spillCutText(cut, captured.totalBytes)}); the newest ${captured.tail.length} are readable from offset ${newest}`
        : `bytes ${request.offset} on of ${request.process} ${request.stream} are no longer readable (their spill file is gone)`
    return answer({ error }, true)
  }
  // Measured as the text will stand in the JSON answer (escapes included), then given raw to it.
  const shown = fitBytes(bytes, context.resultBytes - ENVELOPE, IN_JSON)
  const next = request.offset + shown.used
  return answer({
    process: request.process,
    stream: request.stream,
    offset: request.offset,
    bytes: shown.used,
    total: captured.totalBytes,
    ...(next < captured.totalBytes ? { next } : {}),
    ...(shown.base64 ? { base64: shown.text } : { text: bytes.subarray(0, shown.used).toString('utf8') }),
  })
}
