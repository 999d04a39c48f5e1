import { randomUUID } from 'node:crypto'
import { isAbsolute } from 'node:path'
import { TasksError } from './errors.js'
import type { TaskRegistry } from './types.js'

/** A session as hosts and operators see it. */
export interface SessionInfo {
  /** The owner token every call, task and envelope of the session carries. */
  readonly id: string
  /** What opened it: `mcp-stdio`, `mcp-http`, `host`, ... (for operators). */
  readonly origin: string
  readonly openedAt: Date
  /** How many times it was opened: 1, plus once per reopen by its id (a client that came back). */
  readonly opens: number
  /** When it was last opened (equal to `openedAt` until it is reopened). */
  readonly lastOpenedAt: Date
  /**
   * The session's working directory (absolute), when its host gave one: where its shell commands
   * run unless they say otherwise (`tool-bash`'s `workdir`).
   */
  readonly cwd?: string
  /** Its client, as the client named itself (`claude-code 2.1.197`), when its surface heard it (`note`). */
  readonly client?: string
  /** Its last calls (at most 10, oldest first), as its surface noted them: oneshot calls leave this trace only. */
  readonly calls?: readonly SessionCall[]
}

/** One call a session made, for operators. */
export interface SessionCall {
  /** The model-facing name it called. */
  readonly tool: string
  /** When it began (epoch ms), and how long it took. */
  readonly at: number
  readonly ms: number
  /** Its answer was an error. */
  readonly error: boolean
}

/** What a surface notes of an open session (`Sessions.note`). */
export interface SessionFacts {
  readonly client?: string
  readonly call?: SessionCall
}

/** How many calls a session keeps for operators. */
const CALLS_KEPT = 10

/** How to open a session. */
export interface OpenSession {
  /**
   * The id to open: a new session with that id, or the open session of that id again (a client
   * that reconnects keeps what its session owns). Default: a fresh `s-<uuid>`. 1 to 128 characters
   * of `A-Z a-z 0-9 . _ : @ -`.
   */
  readonly id?: string
  /** What opens it (shown to operators); default `host`. */
  readonly origin?: string
  /** Its working directory, an absolute path (a reopen with one replaces it). */
  readonly cwd?: string
}

/** Why a session closed, as close hooks hear it. */
export type CloseReason = 'closed' | 'disconnected' | 'expired' | 'shutdown'

/** Called when a session closes; the session is gone for new calls before the hooks run. */
export type CloseHook = (session: SessionInfo, reason: CloseReason) => void | Promise<void>

/** Called when a session is opened for the first time (not on a reopen); one that throws fails the open. */
export type OpenHook = (session: SessionInfo) => void

/**
 * The `sessions` service: who owns calls, tasks and mail. A surface opens one per client (an MCP
 * connection, an HTTP `Mcp-Session-Id`, a host's own conversation) and closes it when the client
 * is done; what the session owns is stopped by the close hooks its owners registered (tasks,
 * mail). A session can be opened again by its id while it is open: the client came back, and
 * finds what it owns (and, after a crash, its tasks reported lost).
 */
export interface Sessions {
  /** Opens a session (new, or the open one with `options.id` again). */
  open(options?: OpenSession): SessionInfo
  /** The open session with this id, if any. */
  get(id: string): SessionInfo | undefined
  /** Every open session, oldest first: for operators. */
  list(): SessionInfo[]
  /**
   * Closes a session: it is forgotten at once (a reopen by its id makes a new one), then every
   * close hook runs, newest first, each awaited; a hook that throws does not stop the others, and
   * the errors come back together as one AggregateError. Closing an unknown id is an error.
   */
  close(id: string, reason?: CloseReason): Promise<void>
  /**
   * Records what operators should see of an open session: its client as the client named itself
   * (the latest connection's), a call it made (the last 10 kept). Unknown ids are ignored (the
   * session closed meanwhile).
   */
  note(id: string, facts: SessionFacts): void
  /** Runs `hook` on every close from now on; returns the unregistration. */
  onClose(hook: CloseHook): () => void
  /** Runs `hook` when a new session opens; returns the unregistration. */
  onOpen(hook: OpenHook): () => void
}

const ID = /^[A-Za-z0-9._:@-]{1,128}$/

/** Creates a sessions service. */
export function createSessions(): Sessions {
  return new SessionTable()
}

class SessionTable implements Sessions {
  readonly #open = new Map<string, SessionInfo>()
  readonly #closeHooks = new Set<CloseHook>()
  readonly #openHooks = new Set<OpenHook>()

  open(options: OpenSession = {}): SessionInfo {
    const id = options.id ?? `s-${randomUUID()}`
    if (typeof id !== 'string' || !ID.test(id)) {
      throw new TasksError(
        'TASKS_ERR_BAD_SESSION_ID',
        `sessions.open: id ${JSON.stringify(id).slice(0, 140)} is not a session id: use 1 to 128 characters of A-Z a-z 0-9 . _ : @ -`,
      )
    }
    const cwd = options.cwd
    if (cwd !== undefined && (typeof cwd !== 'string' || !isAbsolute(cwd))) {
      throw new TasksError(
        'TASKS_ERR_BAD_SESSION_CWD',
        `sessions.open: cwd ${JSON.stringify(cwd).slice(0, 140)} of session ${id} is not an absolute path`,
      )
    }
    const now = new Date()
    const known = this.#open.get(id)
    if (known !== undefined) {
      const again = { ...known, opens: known.opens + 1, lastOpenedAt: now, ...(cwd ? { cwd } : {}) }
      this.#open.set(id, again)
      return again
    }
    const session: SessionInfo = {
      id,
      origin: options.origin ?? 'host',
      openedAt: now,
      opens: 1,
      lastOpenedAt: now,
      ...(cwd ? { cwd } : {}),
    }
    // An open hook that throws (a mailbox that cannot open the session's store) fails the open:
    // no session is half-open.
    for (const hook of this.#openHooks) hook(session)
    this.#open.set(id, session)
    return session
  }

  get(id: string): SessionInfo | undefined {
    return this.#open.get(id)
  }

  note(id: string, facts: SessionFacts): void {
    const known = this.#open.get(id)
    if (known === undefined) return
    const client = facts.client === undefined ? {} : { client: facts.client.slice(0, 200) }
    const call = facts.call
    const calls = call === undefined ? {} : { calls: [...(known.calls ?? []), call].slice(-CALLS_KEPT) }
    this.#open.set(id, { ...known, ...client, ...calls })
  }

  list(): SessionInfo[] {
    return [...this.#open.values()]
  }

  async close(id: string, reason: CloseReason = 'closed'): Promise<void> {
    const session = this.#open.get(id)
    if (session === undefined) {
      throw new TasksError(
        'TASKS_ERR_UNKNOWN_SESSION',
        `sessions.close: no open session ${JSON.stringify(id)} (never opened, or already closed)`,
      )
    }
    this.#open.delete(id)
    const errors: unknown[] = []
    for (const hook of [...this.#closeHooks].reverse()) {
      try {
        await hook(session, reason)
      } catch (error) {
        errors.push(error)
      }
    }
    if (errors.length > 0) {
      throw new AggregateError(
        errors,
        `sessions.close: ${errors.length} close hook(s) of session ${id} failed`,
      )
    }
  }

  onClose(hook: CloseHook): () => void {
    this.#closeHooks.add(hook)
    return () => this.#closeHooks.delete(hook)
  }

  onOpen(hook: OpenHook): () => void {
    this.#openHooks.add(hook)
    return () => this.#openHooks.delete(hook)
  }
}

/**
 * Stops every running task `session` owns (stream calls, services, background shells), each with
 * its declared cancel, and resolves when all have ended: the close hook of the toolbox plugin.
 */
export async function stopOwnedTasks(tasks: TaskRegistry, session: string): Promise<void> {
  const running = tasks.all().filter((task) => task.owner === session && task.exit === undefined)
  await Promise.all(running.map((task) => tasks.cancel(task.id, session)))
}

/**
 * Opens the session `id` unless it is open: a call that names a session nobody opened (an
 * in-process host, `toolvisor call --session X`) gets one, with its mailbox, as an MCP connection
 * does. Throws `TASKS_ERR_BAD_SESSION_ID` for an id that is not a session id.
 */
export function ensureSession(sessions: Sessions, id: string): SessionInfo {
  return sessions.get(id) ?? sessions.open({ id, origin: 'host' })
}
