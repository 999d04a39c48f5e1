import type { ReadBack, ReadBackOf } from '@toolvisor/answers'
import { eventValue, fitBytes, fitForward, type Renderer, rendererFor } from '@toolvisor/answers'
import type { ToolSpec } from '@toolvisor/describe-v2'
import {
  type ManagedProcess,
  type ProcessExit,
  type ProcessOutputView,
  type ProcessRuntime,
  type SequencedEvent,
  spillCutText,
} from '@toolvisor/process-runtime'
import type { ModeCall, ModeHandler } from '../modes.js'
import type { Oneshots } from '../oneshots.js'
import {
  bytesText,
  ERROR_TAIL_BYTES,
  emptyResult,
  exitMeta,
  failure,
  networkNote,
  succeeded,
  text,
} from '../results.js'
import type { ToolResult } from '../types.js'

/**
 * The `oneshot` mode: the process runs to its end and the answer is its output (ruling 9), at
 * most `resultBytes` of it; a call whose answer left output out is remembered in `oneshots` so
 * its whole output stays readable (`readBack` words how, when something reads it).
 */
export function oneshotHandler(
  runtime: ProcessRuntime,
  oneshots: Oneshots,
  readBackOf: ReadBackOf,
): ModeHandler {
  return {
    async call(call) {
      const render = rendererFor(call.rules.keepControls)
      const readBack = readBackOf()
      const framing = call.loaded.spec.process.output.framing
      const collector =
        framing === 'chunks' ? undefined : new EventCollector(call.rules.resultBytes, framing, render)
      const process = runtime.start({
        ...call.start,
        signal: call.ctx.signal,
        onEvent: (event) => {
          collector?.add(event)
          call.progress?.(event)
        },
      })
      const exit = await process.exit
      const answer = succeeded(exit)
        ? withNetworkNote(oneshotResult({ call, process, exit, collector, render, readBack }), process)
        : {
            result: failure(call.name, process, exit, { render, readAs: process.id, readBack }),
            cut: failureCut(process.output),
          }
      // Only a call whose answer left output out is kept: its note names it, the read back reads it.
      if (answer.cut) oneshots.add(process, call.ctx.sessionId)
      return answer.result
    },
  }
}

/** A successful answer with the run's network refusals added (`networkNote`). */
function withNetworkNote(answer: Answer, process: ManagedProcess): Answer {
  const note = networkNote(process)
  if (note === '') return answer
  const [first, ...rest] = answer.result.content
  const content =
    first?.type === 'text'
      ? [{ ...first, text: `${first.text}${note}` }, ...rest]
      : [{ type: 'text' as const, text: note.slice(1) }, ...answer.result.content]
  return { ...answer, result: { ...answer.result, content } }
}

interface Finished {
  readonly call: ModeCall
  readonly process: ManagedProcess
  readonly exit: ProcessExit
  readonly collector: EventCollector | undefined
  readonly render: Renderer
  readonly readBack: ReadBack | undefined
}

/** True when a failure's tails did not hold all of stdout or stderr. */
function failureCut(output: ProcessOutputView): boolean {
  return output.stdout().totalBytes > ERROR_TAIL_BYTES || output.stderr().totalBytes > ERROR_TAIL_BYTES
}

/** An answer, and whether it left output out (then the call is kept, for reading it back). */
interface Answer {
  readonly result: ToolResult
  readonly cut: boolean
}

/** Oneshot results (ruling 9): jsonl a JSON array, lines joined, chunks as stdout; `empty-result` on 0 bytes. */
function oneshotResult({ call, process, exit, collector, render, readBack }: Finished): Answer {
  const stdout = process.output.stdout()
  const meta = exitMeta(process, exit)
  if (stdout.totalBytes === 0) return { result: text(emptyResult(call.loaded.spec), false, meta), cut: false }
  if (collector === undefined) {
    const shown = fitBytes(stdout.head, call.rules.resultBytes, render)
    const cut = shown.used < stdout.totalBytes
    const lost = stdout.spillCut ? `; ${spillCutText(stdout.spillCut, stdout.totalBytes)}` : ''
    const readOn = readBack?.call({ command: 'output', process: process.id, offset: shown.used })
    const note = cut
      ? `\n[output truncated: showing the first ${shown.used} of ${stdout.totalBytes} bytes` +
        `${readOn ? `; read on with ${readOn}` : ''}${lost}]`
      : ''
    return { result: text(bytesText(shown) + note, false, meta), cut }
  }
  const cut = collector.elided > 0
  const note = cut ? `\n${elisionNote(collector, process, call.rules.resultBytes, readBack)}` : ''
  if (call.loaded.spec.process.output.framing === 'lines') {
    return { result: text(collector.pieces.join('\n') + note, false, meta), cut }
  }
  const structuredContent = { events: collector.values, ...(cut ? { elided: collector.elided } : {}) }
  return {
    result: { ...text(`[${collector.pieces.join(',')}]${note}`, false, meta), structuredContent },
    cut,
  }
}

function elisionNote(
  collector: EventCollector,
  process: ManagedProcess,
  budget: number,
  readBack: ReadBack | undefined,
): string {
  const { totalBytes: total, spillCut } = process.output.stdout()
  const lost = spillCut ? `; ${spillCutText(spillCut, total)}` : ''
  const read = readBack?.call({ command: 'output', process: process.id })
  return (
    `[${collector.elided} more events elided: an answer holds ${budget} bytes at most; ` +
    `stdout is ${total} bytes${read ? `, read it with ${read}` : ''}${lost}]`
  )
}

/**
 * Keeps the first events of a oneshot, rendered, while they fit the budget, then counts the rest.
 * `lines` events are text (an `invalid` one, such as an overlong line, is its JSON), `jsonl`
 * events JSON.
 */
class EventCollector {
  readonly pieces: string[] = []
  readonly values: unknown[] = []
  elided = 0
  #spent = 0

  constructor(
    readonly budget: number,
    readonly framing: ToolSpec['process']['output']['framing'],
    readonly render: Renderer,
  ) {}

  add(event: SequencedEvent): void {
    if (this.elided > 0) {
      this.elided++
      return
    }
    const value = eventValue(event.value)
    const piece =
      this.framing === 'lines' && typeof value === 'string'
        ? this.render.text(value)
        : this.render.json(value)
    const size = Buffer.byteLength(piece) + 1
    if (this.#spent + size <= this.budget) {
      this.#spent += size
      this.pieces.push(piece)
      this.values.push(value)
      return
    }
    if (this.values.length === 0) {
      // The first event alone is over the budget: its head stands for it.
      const cut = fitForward([value], this.budget, this.render)
      this.pieces.push(...cut.pieces)
      this.values.push(...cut.values)
      this.#spent = this.budget
    } else this.elided++
  }
}
