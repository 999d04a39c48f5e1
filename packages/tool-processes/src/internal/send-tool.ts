import { ESCAPING, fitForward } from '@toolvisor/answers'
import { RuntimeError } from '@toolvisor/process-runtime'
import { type TaskRegistry, TasksError } from '@toolvisor/tasks'
import type { LoadedTool, Tool, ToolCallContext, ToolResult } from '@toolvisor/toolbox'
import { answer, refusal, statusOf } from '../answers.js'
import { ProcessesError } from '../errors.js'
import { sendArgs } from './args.js'
import { Service } from './service.js'

/** How `send` answers. */
export interface SendSettings {
  /** How long the events the process produces in reply are collected (ms). */
  readonly replyMs: number
  /** The most bytes an answer holds. */
  readonly resultBytes: number
}

/** The most events one reply holds; later ones of the window are mail. */
const REPLY_EVENTS = 1000
/** Room an answer keeps for its fields around the events. */
const ENVELOPE = 512

/**
 * The `slug.send` companion of a service tool (spec §2.4, ruling 14): `process` (a handle of this
 * family, of the calling session) and `event`, whose schema is the declared `input.event`
 * verbatim. The event is checked before anything is written; the answer is
 * `{"accepted":true,"events":[...]}`, what the process produced within the reply window. Those
 * events are the reply, not mail too (decision 0020, amended 2026-12-03); what the answer cannot
 * hold, and what comes after the window, is mail.
 */
export function sendTool(loaded: LoadedTool, tasks: TaskRegistry, settings: SendSettings): Tool {
  const { slug } = loaded.spec
  const name = `${slug}.send`
  const declared = sendArgs(loaded)
  return {
    name,
    description:
      `Sends one event to a running ${slug} process, by the handle starting ${slug} returned (p1, p2, ...). ` +
      `The event must match ${slug}'s input schema. The answer is {"accepted":true,"events":[...]}: ` +
      `the events the process produced within ${settings.replyMs / 1000} s (they are not mailed again); ` +
      'later ones arrive as mail.',
    inputSchema: declared.schema,
    async call(raw, ctx) {
      const parsed = declared.parse(raw)
      if ('problem' in parsed) return refusal(`${name}: ${parsed.problem}`)
      const args = parsed.value
      const target = serviceOf(tasks, loaded, args.process, ctx.sessionId)
      if (typeof target === 'string') return refusal(`${name}: ${target}`)
      const problem = loaded.spec.process.input?.validate?.(args.event)
      if (problem !== undefined) {
        return refusal(
          `${name}: the event does not match ${slug}'s input.event: ${problem.replace(/^\$/, '$.event')}; ` +
            `nothing was written, ${args.process} is untouched`,
        )
      }
      return deliver({ service: target, event: args.event, ctx, settings, name })
    },
  }
}

/** The service behind `id` for this family and session, or why there is none. */
function serviceOf(
  tasks: TaskRegistry,
  loaded: LoadedTool,
  id: string,
  session: string | undefined,
): Service | string {
  let process: unknown
  try {
    process = tasks.process(id, session)
  } catch (error) {
    if (RuntimeError.is(error) || TasksError.is(error)) return error.message
    throw error
  }
  const { slug } = loaded.spec
  const task = tasks.get(id, session)
  if (!(process instanceof Service))
    return `${id} is a ${task.kind} task of ${task.tool}, not a service: nothing can be sent to it`
  if (process.tool !== slug)
    return `${id} is a ${process.tool} process, not a ${slug} one: send to it with ${process.tool}.send`
  if (process.lifecycle.status !== 'running')
    return `${id} is ${statusOf(process.lifecycle)}: nothing was written (start ${slug} again for a new process)`
  return process
}

/** One send to a checked service. */
interface Delivery {
  readonly service: Service
  readonly event: unknown
  readonly ctx: ToolCallContext
  readonly settings: SendSettings
  readonly name: string
}

/**
 * Writes the event, then collects the reply for the window (less when the process ends or the
 * caller goes). The window takes the events its answer holds, so they are not mail; the first one
 * the answer cannot hold closes it, and that one and every later one is mail. A write that fails,
 * or a caller that went (its answer reaches nobody), gives what was taken back to the mail.
 */
async function deliver({ service, event, ctx, settings, name }: Delivery): Promise<ToolResult> {
  const reply = new Reply(settings.resultBytes - ENVELOPE)
  const close = service.takeReplies((value) => reply.take(value))
  try {
    await service.write(event)
  } catch (error) {
    close()
    service.mailTaken(reply.events)
    if (RuntimeError.is(error) || TasksError.is(error) || ProcessesError.is(error))
      return refusal(`${name}: ${error.message}`)
    throw error
  }
  await replyWindow(settings.replyMs, service.exit, ctx.signal)
  close()
  if (ctx.signal.aborted) service.mailTaken(reply.events)
  // Takes what `take` took: the same budget, so only a first event over it is cut (to a head).
  const fitted = fitForward(reply.events, settings.resultBytes - ENVELOPE, ESCAPING)
  const status = service.lifecycle.status === 'running' ? {} : { status: statusOf(service.lifecycle) }
  const note =
    reply.mailed > 0
      ? {
          elided: reply.mailed,
          note:
            `${reply.mailed} more events came within the window than this answer holds; they come as mail ` +
            `from process:${service.handle} (processes {"command":"tail","process":"${service.handle}"} shows them too)`,
        }
      : {}
  return answer({ accepted: true, events: fitted.values, ...note, ...status })
}

/**
 * The events of one reply, taken as they come while they fit the answer's budget (as `fitForward`
 * measures them; a first event over it alone is kept, to be cut) and `REPLY_EVENTS`. The first
 * that does not fit ends the taking, so the reply is the window's first events and the mail has
 * the rest, in order.
 */
class Reply {
  readonly events: unknown[] = []
  /** Events of the window left to the mail. */
  mailed = 0
  readonly #budget: number
  #bytes = 0
  #full = false

  constructor(budget: number) {
    this.#budget = budget
  }

  take(value: unknown): boolean {
    if (!this.#full) {
      const size = Buffer.byteLength(ESCAPING.json(value)) + 1
      const first = this.events.length === 0
      if (this.events.length < REPLY_EVENTS && (first || this.#bytes + size <= this.#budget)) {
        this.events.push(value)
        this.#bytes += size
        // One over the budget is answered cut, and nothing after it.
        if (this.#bytes > this.#budget) this.#full = true
        return true
      }
      this.#full = true
    }
    this.mailed += 1
    return false
  }
}

/** Resolves after `ms`, or when the process ends, or when the caller gives up: whichever is first. */
function replyWindow(ms: number, exit: Promise<unknown>, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    if (signal.aborted) return done()
    signal.addEventListener('abort', done, { once: true })
    void exit.then(done)
  })
}
