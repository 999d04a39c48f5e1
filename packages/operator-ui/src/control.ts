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
 * `POST /ui/api/stop` (`{session, task}`: the task's declared cancel, through `tasks.cancel` as
 * the model's `processes stop` does) and `POST /ui/api/end` (`{session}`: `sessions.close`, which
 * stops everything it owns). Only with `control`; only with the page's header and a JSON body;
 * each logged with who asked and when, before and after.
 */
export async function act(
  context: ControlContext,
  action: 'stop' | 'end',
  request: IncomingMessage,
  response: ServerResponse,
  who: string,
): Promise<void> {
  const refusal = refusalOf(context, request)
  if (refusal !== undefined) {
    request.resume()
    return sendJson(response, 403, { error: refusal })
  }
  const text = await bodyOf(request, 4096)
  const body = parsed(text)
  const session = typeof body?.session === 'string' ? body.session : undefined
  const task = typeof body?.task === 'string' ? body.task : undefined
  if (session === undefined || (action === 'stop' && task === undefined)) {
    const shape = action === 'stop' ? '{"session": ID, "task": ID}' : '{"session": ID}'
    return sendJson(response, 400, { error: `expected a JSON body ${shape}` })
  }
  if (action === 'stop') return stop(context, response, who, session, task!)
  return end(context, response, who, session)
}

function refusalOf(context: ControlContext, request: IncomingMessage): string | undefined {
  if (!context.control)
    return 'the operator page is read-only: start toolvisor serve with --ui-control to stop processes and end sessions'
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
