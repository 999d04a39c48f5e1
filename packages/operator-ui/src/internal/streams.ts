import { closeSync, constants, createReadStream, fstatSync, openSync } from 'node:fs'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { ManagedProcess } from '@toolvisor/process-runtime'
import type { TaskRegistry } from '@toolvisor/tasks'
import { SECURITY_HEADERS, sendJson } from '../http.js'
import type { StateHub } from './live.js'
import { eventRun, stderrRun } from './reads.js'
import { EventStream } from './sse.js'
import { defaultStart, resumeFrom, Tail } from './tail.js'

/** What the read routes need. */
export interface ReadContext {
  readonly tasks: TaskRegistry
  readonly hub: StateHub
  /** The open event streams (bounded by `maxStreams`). */
  readonly streams: Set<EventStream>
  readonly maxStreams: number
}

const TASK_ID = /^[A-Za-z0-9._:@-]{1,160}$/

/** `GET /ui/events`: the state stream. */
export function stateStream(context: ReadContext, response: ServerResponse): void {
  const stream = open(context, response)
  if (stream) context.hub.add(stream)
}

/** `GET /ui/tail/<task>?session=<owner>[&events=N&stderr=N]`: one process's live tail. */
export function tailStream(
  context: ReadContext,
  url: URL,
  request: IncomingMessage,
  response: ServerResponse,
): void {
  const task = decoded(url.pathname.slice('/ui/tail/'.length))
  const process = processOf(context, task, url, response)
  if (process === undefined) return
  const start = resumeFrom(header(request, 'last-event-id')) ?? {
    events: whole(url.searchParams.get('events')) ?? defaultStart(process.output).events,
    stderr: whole(url.searchParams.get('stderr')) ?? defaultStart(process.output).stderr,
  }
  const stream = open(context, response)
  if (stream) new Tail(stream, process, start)
}

/** `GET /ui/api/page?task=&session=&offset=&max=`: events by position, through everything kept. */
export function eventPage(context: ReadContext, url: URL, response: ServerResponse): void {
  const process = processOf(context, url.searchParams.get('task') ?? '', url, response)
  if (process === undefined) return
  const offset = whole(url.searchParams.get('offset')) ?? 0
  const max = Math.min(500, Math.max(1, whole(url.searchParams.get('max')) ?? 100))
  sendJson(response, 200, eventRun(process.output, offset, max))
}

/** `GET /ui/api/stderr?task=&session=&offset=&max=`: stderr bytes, through everything kept. */
export async function stderrPage(context: ReadContext, url: URL, response: ServerResponse): Promise<void> {
  const process = processOf(context, url.searchParams.get('task') ?? '', url, response)
  if (process === undefined) return
  const offset = whole(url.searchParams.get('offset')) ?? 0
  const max = Math.min(256 * 1024, Math.max(1, whole(url.searchParams.get('max')) ?? 16 * 1024))
  sendJson(response, 200, await stderrRun(process.output, offset, max))
}

/**
 * `GET /ui/api/recording?task=&session=`: a terminal task's recording (asciicast v2, what
 * `asciinema play` replays), as a download. Opened without following a link, a regular file only,
 * sent as long as it was when opened.
 */
export function recordingFile(context: ReadContext, url: URL, response: ServerResponse): void {
  const task = url.searchParams.get('task') ?? ''
  const process = processOf(context, task, url, response)
  if (process === undefined) return
  const path = process.terminal?.recording
  if (path === undefined) {
    sendJson(response, 409, {
      error: `${task} (${process.tool}) does not run on a terminal: it has no recording`,
    })
    return
  }
  let fd: number
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  } catch (error) {
    const gone = (error as NodeJS.ErrnoException).code === 'ENOENT'
    sendJson(response, 404, {
      error: gone
        ? `${task}: its recording is not kept (any more)`
        : `${task}: its recording cannot be read: ${String(error)}`,
    })
    return
  }
  const stat = fstatSync(fd)
  if (!stat.isFile()) {
    closeSync(fd)
    sendJson(response, 404, { error: `${task}: its recording is not a regular file` })
    return
  }
  response.writeHead(200, {
    ...SECURITY_HEADERS,
    'content-type': 'application/x-asciicast',
    'content-length': String(stat.size),
    'content-disposition': `attachment; filename="${task.replace(/[^A-Za-z0-9._-]/g, '_')}.cast"`,
  })
  createReadStream('', { fd, start: 0, end: Math.max(0, stat.size - 1) })
    .on('error', () => response.destroy())
    .pipe(response)
}

/** An event stream, or a 503 past the bound. */
function open(context: ReadContext, response: ServerResponse): EventStream | undefined {
  if (context.streams.size >= context.maxStreams) {
    sendJson(response, 503, {
      error: `too many open streams (${context.maxStreams}); close a page or a tail`,
    })
    return undefined
  }
  const stream = new EventStream(response)
  context.streams.add(stream)
  stream.onClose(() => context.streams.delete(stream))
  return stream
}

/**
 * The process of `task`, asked for as its owner (`session`; empty: a task every session sees):
 * the registry's own fence. A 404 that says why when there is none.
 */
function processOf(
  context: ReadContext,
  task: string,
  url: URL,
  response: ServerResponse,
): ManagedProcess | undefined {
  if (!TASK_ID.test(task)) {
    sendJson(response, 404, { error: `not a task id: ${JSON.stringify(task.slice(0, 160))}` })
    return undefined
  }
  const session = url.searchParams.get('session') || undefined
  try {
    return context.tasks.process(task, session)
  } catch (error) {
    sendJson(response, 404, { error: error instanceof Error ? error.message : String(error) })
    return undefined
  }
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}

function whole(text: string | null): number | undefined {
  return text !== null && /^\d{1,15}$/.test(text) ? Number(text) : undefined
}

function header(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name]
  return Array.isArray(value) ? value[0] : value
}
