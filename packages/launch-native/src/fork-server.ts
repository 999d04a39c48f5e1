import { type ChildProcess, spawn } from 'node:child_process'
import type { Launch, Spawned, SpawnOptions, WarmAnswer, WarmPlan } from '@toolvisor/process-runtime'
import { signalGroup, wireExtras } from '@toolvisor/process-runtime'
import {
  type Answered,
  type ForkServerOptions,
  LAUNCH_DEADLINE_MS,
  launchError,
  launchTimeout,
  type Pending,
  pendingOf,
  removeAnswer,
  removePayload,
  requestOf,
  resizeMessage,
  signalName,
  type TerminalSize,
  warmAnswer,
  warmPayload,
} from './fork-request.js'
import { ServedChild, socketsOver } from './internal/served-child.js'

/**
 * The runtime's side of the fork server (see `native/toolvisor-spawnd.c`): one per Node process
 * and binary, started by the first `Runtime` (`forkServer()`), started again after it died. The
 * channel holds the event loop open only while a launch is pending or a child it forked runs, as a
 * child of Node's own spawn would. Answers are matched to launches by id (the server answers each
 * when its exec reports); a launch not answered within its deadline fails alone and is killed.
 */
export class ForkServer {
  readonly #server: ChildProcess
  readonly #byId = new Map<number, Pending>()
  readonly #children = new Map<number, ServedChild | Pending>()
  /** What each "w" and "r" sent waits for, in order (the server answers each kind in the order asked). */
  readonly #asked = { v: [] as Answered[], r: [] as Answered[] }
  /** Children whose launch resolved on this turn of the loop (see `#exited`). */
  readonly #fresh = new Set<ServedChild>()
  readonly #deadlineMs: number
  #nextId = 1
  #busy = 0
  #alive = true

  constructor(binary: string, options: ForkServerOptions = {}) {
    this.#deadlineMs = options.deadlineMs ?? LAUNCH_DEADLINE_MS
    this.#server = spawn(binary, [], {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      env: { PATH: '/usr/bin:/bin' },
    })
    this.#server.unref()
    this.#server.channel?.unref()
    this.#server.on('message', (message: unknown, handle: unknown) => this.#message(message, handle))
    this.#server.on('error', (error) => this.#died(`the fork server failed: ${error.message}`))
    this.#server.on('exit', (code, signal) => {
      const died = () => this.#died(`the fork server ended (${signal ?? `code ${code}`})`)
      // Its last answers may still wait in the channel: they are read first, its close follows them.
      if (this.#server.connected) this.#server.once('disconnect', died)
      else died()
    })
  }

  get alive(): boolean {
    return this.#alive
  }

  /** The server's own pid (what every child it forked has for parent). */
  get pid(): number | undefined {
    return this.#server.pid
  }

  /** Ends the server; what it forked and still runs is killed and told so (as when it dies). */
  close(): void {
    this.#died('the fork server was closed')
  }

  /**
   * Forks `launch` from the server; resolves once its exec succeeded, with its descriptors.
   * Rejects as `spawnLaunch` throws, with the exec's own error, or with `RUNTIME_ERR_LAUNCH_TIMEOUT`
   * when no answer came within the deadline (nothing of it runs then).
   */
  launch(launch: Launch, options: SpawnOptions = {}): Promise<Spawned> {
    if (!this.#alive) return Promise.reject(new Error('the fork server ended'))
    const id = this.#nextId++
    let request: string
    try {
      request = requestOf(id, launch)
    } catch (error) {
      return Promise.reject(error)
    }
    return new Promise<Spawned>((resolve, reject) => {
      const pending = pendingOf(id, launch, options, resolve, reject)
      this.#byId.set(id, pending)
      pending.timer = setTimeout(() => this.#expire(pending), this.#deadlineMs)
      this.#hold()
      this.#tell(request)
    })
  }

  /**
   * Has the server make the cgroups of the launch that comes next (`plan`: its directories and
   * limits, off this event loop) and fork a child ahead into them, which a launch into exactly
   * those then becomes: its migration into them is done by then (see `struct warm` in
   * `native/toolvisor-spawnd.c`). Resolves once the server did (`made` false with no problem: the
   * server is gone): a tree given up on is killed after that, so no warm child comes into it
   * afterwards.
   */
  warm(plan: WarmPlan): Promise<WarmAnswer> {
    const payload = warmPayload(plan)
    return this.#ask(this.#asked.v, payload && `w ${payload}`).then((answer) => warmAnswer(plan, answer))
  }

  /**
   * Has the server remove these cgroups (a launch's, once it ended: an rmdir costs more than the
   * rest of a tree's end): resolves with how many are still there, undefined when it was not done.
   */
  remove(dirs: readonly string[]): Promise<number | undefined> {
    const payload = removePayload(dirs)
    return this.#ask(this.#asked.r, payload && `r ${payload}`).then(removeAnswer)
  }

  /** Resizes the terminal of launch `pid` (SIGWINCH follows); a launch without one or ended: nothing. */
  resize(pid: number, size: TerminalSize): void {
    this.#tell(resizeMessage(pid, size))
  }

  /** Sends `message` (none: answered undefined) and resolves with the words of its answer. */
  #ask(queue: Answered[], message: string | undefined) {
    if (!this.#alive || message === undefined) return Promise.resolve(undefined)
    return new Promise<readonly string[] | undefined>((resolve) => {
      // Held open until answered: a runtime disposed meanwhile waits for this answer.
      this.#hold()
      queue.push(resolve)
      this.#tell(message)
    })
  }

  #message(message: unknown, handle: unknown): void {
    if (typeof message !== 'string') return
    const words = message.split(' ')
    const [kind, a, b, c] = words
    if (kind === 'f') this.#descriptor(Number(a), Number(b), Number(c), handle)
    else if (kind === 's') this.#started(Number(a), Number(b), Number(c))
    else if (kind === 'e') this.#failed(Number(a), Number(b), c ?? '')
    else if (kind === 'x') this.#exited(Number(a), Number(b), Number(c))
    else if (kind === 'v' || kind === 'r') this.#answered(this.#asked[kind], words.slice(1))
  }

  #descriptor(id: number, index: number, written: number, handle: unknown): void {
    const pending = this.#byId.get(id)
    if (pending === undefined || handle === undefined) {
      ;(handle as { close?: () => void } | undefined)?.close?.()
      return
    }
    pending.handles[index] = handle as object
    pending.written[index] = written
    pending.received++
    this.#complete(pending)
  }

  /** `passed`: how many of its descriptors follow (a data extra the server wrote whole is not passed). */
  #started(id: number, pid: number, passed: number): void {
    const pending = this.#byId.get(id)
    // A launch that failed at its deadline meanwhile (the kill asked for crossed this answer):
    // nothing of it may run. An id never sent, or told twice, is a server to stop trusting.
    if (pending === undefined || pending.pid !== undefined) {
      if (pid > 0) signalGroup(pid, 'SIGKILL')
      if (id >= this.#nextId || pending !== undefined)
        this.#died(`the fork server answered launch ${id} twice, or unasked`)
      return
    }
    pending.pid = pid
    pending.expected = passed
    this.#children.set(pid, pending)
    this.#complete(pending)
  }

  #failed(id: number, errno: number, where: string): void {
    // A request it could not read at all: the server and the runtime no longer agree on the
    // protocol, and no answer can be matched any more.
    if (id === 0) {
      this.#died(`the fork server could not read a launch request (${where})`)
      return
    }
    const pending = this.#byId.get(id)
    // Failed at its deadline already.
    if (pending === undefined) return
    this.#settle(pending)
    pending.reject(launchError(pending.launch, errno, where, pending.tool))
  }

  /**
   * No answer within the deadline: the launch fails alone (what the server sends for it later is
   * dropped, anything of it that runs killed) and the server is told to kill its child.
   */
  #expire(pending: Pending): void {
    if (this.#byId.get(pending.id) !== pending) return
    this.#settle(pending)
    if (pending.pid !== undefined) {
      signalGroup(pending.pid, 'SIGKILL')
      this.#children.delete(pending.pid)
    }
    for (const handle of pending.handles) (handle as { close?: () => void } | undefined)?.close?.()
    this.#tell(`k ${pending.id}`)
    pending.reject(launchTimeout(pending.tool, this.#deadlineMs))
  }

  /** A launch answered (or given up): no longer waited for. */
  #settle(pending: Pending): void {
    clearTimeout(pending.timer)
    this.#byId.delete(pending.id)
    this.#release()
  }

  #exited(pid: number, code: number, signal: number): void {
    const child = this.#children.get(pid)
    if (child === undefined) return
    const exit: [number | null, NodeJS.Signals | null] = code < 0 ? [null, signalName(signal)] : [code, null]
    if (!(child instanceof ServedChild)) child.exit = exit
    // Resolved on this very turn (its start and its end came in one read): told once whoever
    // awaits the launch has had its turn to listen.
    else if (this.#fresh.has(child)) setImmediate(() => this.#end(child, exit))
    else this.#end(child, exit)
  }

  #complete(pending: Pending): void {
    if (pending.pid === undefined || pending.received < pending.expected) return
    clearTimeout(pending.timer)
    this.#byId.delete(pending.id)
    const { launch, pid } = pending
    const sockets = socketsOver(pending.handles, 3 + launch.extraFds.length, pending.stdoutInSlabs)
    const child = new ServedChild(pid, sockets, launch.terminal && ((size) => this.resize(pid, size)))
    this.#children.set(pid, child)
    this.#fresh.add(child)
    setImmediate(() => this.#fresh.delete(child))
    const written = (i: number) => pending.written[3 + i] ?? 0
    pending.resolve({ child, pipes: wireExtras(launch, (i) => sockets[3 + i], written) })
    // Told before its descriptors were all here: told now, once its listeners are on.
    if (pending.exit) {
      const exit = pending.exit
      setImmediate(() => this.#end(child, exit))
    }
  }

  #end(child: ServedChild, exit: [number | null, NodeJS.Signals | null], why?: string): void {
    this.#children.delete(child.pid)
    this.#release()
    child.ended(...exit, why)
  }

  #answered(
    queue: ((answer: readonly string[] | undefined) => void)[],
    answer: readonly string[] | undefined,
  ) {
    const waiting = queue.shift()
    if (waiting === undefined) return
    this.#release()
    waiting(answer)
  }

  /** Sends one message; a server that cannot be reached has died. */
  #tell(message: string): void {
    this.#server.send(message, (error) => {
      if (error) this.#died(`the fork server cannot be reached: ${error.message}`)
    })
  }

  #hold(): void {
    if (this.#busy++ === 0) this.#server.channel?.ref()
  }

  #release(): void {
    if (--this.#busy === 0) this.#server.channel?.unref()
  }

  /**
   * The server is gone (killed from outside: it ignores the usual signals). What it forked can no
   * longer be told: killed with its group and reported killed, so no process runs unaccounted for;
   * launches waiting for it fail.
   */
  #died(why: string): void {
    if (!this.#alive) return
    this.#alive = false
    // Launches not complete (descriptors on their way) fail, what runs killed; every child is told.
    for (const pending of this.#byId.values()) {
      clearTimeout(pending.timer)
      if (pending.pid !== undefined) signalGroup(pending.pid, 'SIGKILL')
      for (const handle of pending.handles) (handle as { close?: () => void } | undefined)?.close?.()
      pending.reject(new Error(why))
    }
    const killed = `killed by toolvisor: ${why}, and what it forked cannot be followed`
    for (const child of [...this.#children.values()]) {
      if (!(child instanceof ServedChild)) continue
      signalGroup(child.pid, 'SIGKILL')
      this.#end(child, [null, 'SIGKILL'], killed)
    }
    this.#byId.clear()
    this.#children.clear()
    for (const queue of Object.values(this.#asked)) while (queue.length > 0) this.#answered(queue, undefined)
    this.#server.kill('SIGKILL')
  }
}
