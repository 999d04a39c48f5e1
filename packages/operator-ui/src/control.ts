import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Sessions, TaskRegistry } from '@toolvisor/tasks'
import { bodyOf, sendJson } from './http.js'
import type { ActionView } from './snapshot.js'

/** The header the page's script sets on every action: a form or a link elsewhere cannot. */
export const ACTION_HEADER = 'x-toolvisor-ui'

/** What the actions need. */
export interface ControlContext {
  readonly control: boolean
  readonly tasks: TaskRegistry
  readonly sessions: Sessions
  readonly log: (line: string) => void
  /** Records an action for the page (and pushes the state). */
  readonly record: (action: ActionView) => void
}

/** Actions kept for the page to list. */
export const ACTIONS_KEPT = 50

/**
 * UTF-16 code units one `POST /ui/api/keys` types at most, as JavaScript counts a string (a paste
 * goes as several, in order, never splitting a character).
 */
export const KEYS_PER_POST = 4096

/** Who typed into which task already: the first keystrokes are logged and listed, not every one. */
const typists = new WeakMap<ControlContext, Set<string>>()
/** Pairs remembered at most; past them the set starts again (a long serve logs a pair again, no more). */
const TYPISTS_KEPT = 10_000

/**
 * `POST /ui/api/stop` (`{session, task}`: the task's declared cancel, through `tasks.cancel` as
 * the model's `processes stop` does), `POST /ui/api/end` (`{session}`: `sessions.close`, which
 * stops everything it owns) and `POST /ui/api/keys` (`{session, task, data}`: `data` typed into the
 * task's terminal, as the operator's keyboard sends it). Only with `control`; only with the page's
 * header and a JSON body; each logged with who asked and when (stop and end before and after;
 * typing once per operator and task, never what was typed).
 */
export async function act(
  context: ControlContext,
  action: 'stop' | 'end' | 'keys',
  request: IncomingMessage,
  response: ServerResponse,
  who: string,
): Promise<void> {
  const refusal = refusalOf(context, request)
  if (refusal !== undefined) {
    request.resume()
    return sendJson(response, 403, { error: refusal })
  }
  // A code unit is at most 6 bytes of JSON (`\\uXXXX`): the bound fits every post the page makes.
  const text = await bodyOf(request, action === 'keys' ? 8 * KEYS_PER_POST : 4096)
  const body = parsed(text)
  const session = typeof body?.session === 'string' ? body.session : undefined
  const task = typeof body?.task === 'string' ? body.task : undefined
  const data = typeof body?.data === 'string' ? body.data : undefined
  if (
    session === undefined ||
    (action !== 'end' && task === undefined) ||
    (action === 'keys' && data === undefined)
  ) {
    const shape = {
      stop: '{"session": ID, "task": ID}',
      end: '{"session": ID}',
      keys: '{"session": ID, "task": ID, "data": TEXT}',
    }
    return sendJson(response, 400, { error: `expected a JSON body ${shape[action]}` })
  }
  if (action === 'stop') return stop(context, response, who, session, task!)
  if (action === 'keys') return keys(context, response, who, session, task!, data!)
  return end(context, response, who, session)
}

function refusalOf(context: ControlContext, request: IncomingMessage): string | undefined {
  if (!context.control)
    return 'the operator page is read-only: start toolvisor serve with --ui-control to stop processes, end sessions and type into terminals'
  if (request.headers[ACTION_HEADER] !== '1') return `an action needs the page's ${ACTION_HEADER} header`
  if (!/^application\/json\b/.test(request.headers['content-type'] ?? '')) return 'an action is a JSON body'
  return undefined
}

function parsed(text: string | undefined): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text ?? '')
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined
  } catch {
    return undefined
  }
}

async function stop(
  context: ControlContext,
  response: ServerResponse,
  who: string,
  session: string,
  task: string,
): Promise<void> {
  const owner = session === '' ? undefined : session
  let tool: string
  try {
    tool = context.tasks.get(task, owner).tool
  } catch (error) {
    return sendJson(response, 404, { error: messageOf(error) })
  }
  const what = `stop ${task} (${tool}) of ${owner ? `session ${owner}` : 'every session'}`
  context.log(`toolvisor: operator page: ${who} asked to ${what} at ${new Date().toISOString()}`)
  const exit = await context.tasks.cancel(task, owner)
  const ended = exit.code !== null ? `code ${exit.code}` : exit.signal ? `signal ${exit.signal}` : exit.status
  context.log(`toolvisor: operator page: ${task} ended (${ended}, ${exit.reason})`)
  context.record({ at: Date.now(), who, what: `${what}: ended (${ended})` })
  sendJson(response, 200, { task, exit })
}

async function keys(
  context: ControlContext,
  response: ServerResponse,
  who: string,
  session: string,
  task: string,
  data: string,
): Promise<void> {
  if (data.length > KEYS_PER_POST)
    return sendJson(response, 413, {
      error: `at most ${KEYS_PER_POST} UTF-16 code units a post; send the rest after`,
    })
  const owner = session === '' ? undefined : session
  let process: ReturnType<TaskRegistry['process']>
  try {
    process = context.tasks.process(task, owner)
  } catch (error) {
    return sendJson(response, 404, { error: messageOf(error) })
  }
  const terminal = process.terminal
  if (terminal === undefined)
    return sendJson(response, 409, {
      error: `${task} (${process.tool}) does not run on a terminal: nothing to type into`,
    })
  const seen = typists.get(context) ?? new Set<string>()
  if (seen.size >= TYPISTS_KEPT) seen.clear()
  typists.set(context, seen)
  const pair = `${who}\0${task}`
  // Marked before the keys go, so two posts at once log once; unmarked when they could not go.
  const first = !seen.has(pair)
  seen.add(pair)
  try {
    await terminal.type(data)
  } catch (error) {
    if (first) seen.delete(pair)
    return sendJson(response, 409, { error: `${task} (${process.tool}): ${messageOf(error)}` })
  }
  if (first) {
    const what = `type into ${task} (${process.tool}) of ${owner ? `session ${owner}` : 'every session'}`
    context.log(`toolvisor: operator page: ${who} began to ${what} at ${new Date().toISOString()}`)
    context.record({ at: Date.now(), who, what })
  }
  sendJson(response, 200, { task, typed: data.length })
}

async function end(
  context: ControlContext,
  response: ServerResponse,
  who: string,
  session: string,
): Promise<void> {
  if (context.sessions.get(session) === undefined)
    return sendJson(response, 404, { error: `no open session ${JSON.stringify(session)}` })
  const what = `end session ${session}`
  context.log(`toolvisor: operator page: ${who} asked to ${what} at ${new Date().toISOString()}`)
  let failure: string | undefined
  try {
    await context.sessions.close(session, 'closed')
  } catch (error) {
    failure = messageOf(error)
    context.log(`toolvisor: operator page: ending session ${session}: ${failure}`)
  }
  context.record({ at: Date.now(), who, what: failure ? `${what}: ${failure}` : `${what}: ended` })
  sendJson(response, failure ? 500 : 200, { session, ...(failure ? { error: failure } : { ended: true }) })
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
