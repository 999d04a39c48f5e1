import { type ChildProcess, type StdioOptions, spawn } from 'node:child_process'
import { type BigIntStats, closeSync, constants, fstatSync, openSync, realpathSync } from 'node:fs'
import { CLEAN_ENVIRONMENT, type ExtraFd, type Launch, type Pin, RuntimeError } from '@toolvisor/launchers'
import { MARKER_VARIABLE } from '@toolvisor/run-state'
import type { Child } from '../spawner.js'
import type { PreparedTool } from '../types.js'
import { environmentBlock } from './environment.js'
import { typeDescription, typeOf } from './grant-type.js'
import { overPipes, standardPipes } from './node-pipes.js'

/**
 * The one way a process is launched. The tool's launch becomes the final exec stage
 * (`toolvisor-exec`, run from a descriptor, reading the tool's environment from another and
 * closing every other descriptor); the sandbox mechanism chosen at load wraps that, then the run_as
 * mechanism wraps the result (unless the sandbox switches user itself). Everything before the
 * final exec runs with the clean environment. Without a helper (it could not be built here: only
 * tools with no sandbox and no run_as load then) the tool is spawned directly.
 */
export function assemble(
  tool: PreparedTool,
  launch: Launch,
  helper: string | undefined,
): { readonly launch: Launch; readonly status?: number } {
  if (helper === undefined) return { launch }
  const status = launch.extraFds.length + 1
  let wrapped = finalExec(launch, helper)
  if (tool.sandbox) {
    const runAs = tool.sandbox.mechanism.handlesRunAs ? tool.runAs?.target : undefined
    wrapped = tool.sandbox.mechanism.wrap(wrapped, tool.sandbox.policy, runAs)
  }
  if (tool.runAs?.mechanism) wrapped = tool.runAs.mechanism.wrap(wrapped, tool.runAs.target)
  // Mechanisms only append descriptors: the status pipe keeps its index.
  return { launch: wrapped, status }
}

/**
 * `/proc/self/fd/K --status-fd S --env-bytes L --env-fd S -- FILE ARGS`: the helper from
 * descriptor K; on S, one socket both ways, the tool's environment (L bytes) in and a failed exec
 * out (end of file: the exec succeeded). With its length given, the helper reads the environment
 * and goes on at once, without waiting for the end of the stream (which Node closes on a later turn
 * of its loop: a wait that a busy machine makes long). One descriptor, not two, is one socket pair
 * less to make, watch and close per launch.
 */
function finalExec(launch: Launch, helper: string): Launch {
  const executable = 3 + launch.extraFds.length
  const status = String(executable + 1)
  // The run's marker is no secret and no tool's choice: the wrappers carry it too, so the crash
  // path and operators find every process of the run, not only the tools.
  const marker = launch.env[MARKER_VARIABLE]
  const environment = environmentBlock(launch.env)
  const extraFds: ExtraFd[] = [
    ...launch.extraFds,
    { kind: 'file', path: helper },
    { kind: 'exchange', data: environment },
  ]
  return {
    file: `/proc/self/fd/${executable}`,
    args: [
      // On a terminal the tool's group takes its foreground (a wrapper led the session: bwrap).
      ...(launch.terminal ? ['--foreground'] : []),
      '--status-fd',
      status,
      '--env-bytes',
      String(environment.length),
      '--env-fd',
      status,
      '--',
      launch.file,
      ...launch.args,
    ],
    env: marker === undefined ? CLEAN_ENVIRONMENT : { ...CLEAN_ENVIRONMENT, [MARKER_VARIABLE]: marker },
    cwd: launch.cwd,
    extraFds,
    ...(launch.terminal ? { terminal: launch.terminal } : {}),
    ...(launch.network ? { network: launch.network } : {}),
  }
}

/** A spawned launch: the child, and the `pipe` descriptors a mechanism reads, by extra-fd index. */
export interface Spawned {
  readonly child: Child
  readonly pipes: readonly (NodeJS.ReadableStream | undefined)[]
}

/**
 * Spawns a launch in its own process group: `file` descriptors are referred to (O_PATH: nothing is
 * opened; checked for their type and against their pins) first, passed, and closed here once the
 * child has them; `data` and `exchange` ones
 * are written and their write side closed (an `exchange` stays readable). Throws a RuntimeError when a pinned grant changed (nothing is spawned then).
 */
export function spawnLaunch(
  launch: Launch,
  stdinFile?: Uint8Array,
): Spawned & { readonly child: ChildProcess } {
  // Node's own spawn has no way to make a pseudo-terminal: refused, never run on pipes instead.
  if (launch.terminal !== undefined) {
    throw new RuntimeError(
      'RUNTIME_ERR_SPAWN_FAILED',
      `cannot start ${launch.file} on a terminal: only the fork server of @toolvisor/launch-native makes one, and it is not composed here`,
    )
  }
  const opened: number[] = []
  const ours: number[] = []
  try {
    const stdio = launch.extraFds.map((fd) => {
      if (fd.kind !== 'file') return 'pipe' as const
      const descriptor = openPinned(fd.path, fd.pin)
      opened.push(descriptor)
      return descriptor
    })
    const standard = standardPipes(stdinFile)
    if (standard !== undefined) {
      opened.push(...standard.theirs)
      for (const fd of standard.ours) if (fd !== undefined) ours.push(fd)
    }
    const inherited: StdioOptions = [...(standard?.theirs ?? (['pipe', 'pipe', 'pipe'] as const)), ...stdio]
    const child: ChildProcess = spawn(launch.file, launch.args, {
      cwd: launch.cwd,
      env: launch.env,
      detached: true,
      stdio: inherited,
    })
    if (child.stdio === undefined) {
      // Node started nothing and emits why on the child a turn later, where nobody would listen
      // and the host would die of it: heard here.
      child.once('error', () => {})
      throw outOfDescriptors(launch)
    }
    if (standard !== undefined) overPipes(child, standard.ours)
    ours.length = 0
    const pipes = wireExtras(launch, (i) => child.stdio[3 + i] as ExtraStream | null)
    return { child, pipes }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    throw code === 'EMFILE' || code === 'ENFILE' ? outOfDescriptors(launch, error) : error
  } finally {
    for (const descriptor of opened) closeSync(descriptor)
    // Not taken over by a socket: the spawn threw before.
    for (const descriptor of ours) closeSync(descriptor)
  }
}

/** The failure of a launch this process had no descriptors for (EMFILE, ENFILE): nothing was started. */
function outOfDescriptors(launch: Launch, cause?: unknown): RuntimeError {
  return new RuntimeError(
    'RUNTIME_ERR_SPAWN_FAILED',
    `cannot start ${launch.file}: this process is out of file descriptors (EMFILE or ENFILE), so nothing was started; it may succeed once others close, or raise the limit (ulimit -n)`,
    cause === undefined ? undefined : { cause },
  )
}

/** A stream over one of a child's extra descriptors (a socket pair's end: both ways). */
export type ExtraStream = NodeJS.ReadableStream & NodeJS.WritableStream

/**
 * The extra descriptors' streams by index: `data` written and closed, `exchange` written and kept,
 * `pipe` kept. `written(i)`: how much of extra i's data was written already (by the fork server).
 */
export function wireExtras(
  launch: Launch,
  streamAt: (index: number) => ExtraStream | null | undefined,
  written: (index: number) => number = () => 0,
): (NodeJS.ReadableStream | undefined)[] {
  return launch.extraFds.map((fd, i) => {
    const stream = streamAt(i)
    if (fd.kind === 'file' || !stream) return undefined
    stream.on('error', () => {})
    if (fd.kind === 'pipe') return stream
    // All of it written already (and the write side shut by the fork server): nothing to write,
    // which a child that already exited would refuse (EPIPE), losing what it answered.
    const rest = Buffer.from(fd.data).subarray(written(i))
    if (rest.length > 0 || written(i) === 0) stream.end(rest)
    return fd.kind === 'exchange' ? stream : undefined
  })
}

/**
 * O_PATH (Linux): a descriptor that refers to an object without opening it. Node passes open flags
 * through to open(2) (adding O_CLOEXEC) but does not name this one.
 */
const O_PATH = 0o10000000

/**
 * A descriptor of `path` that opens nothing and never waits (O_PATH | O_NOFOLLOW: no FIFO waits
 * for a writer, no device's open runs, a symlink in the last component comes back as the link),
 * refused unless it is a directory or a regular file and, with a pin, still the object qualified
 * at load. What consumes it needs no more: bwrap's --bind-fd, Landlock's rules, an exec through
 * /proc/self/fd/N. (A symlink on the way is followed here, opening nothing: the pin refuses what
 * it leads to. The fork server refuses it outright, with openat2.)
 */
function openPinned(path: string, pin: Pin | undefined): number {
  let descriptor: number
  let stat: BigIntStats
  try {
    descriptor = openSync(path, O_PATH | constants.O_NOFOLLOW)
    stat = fstatSync(descriptor, { bigint: true })
  } catch (error) {
    throw openFailure(path, pin, (error as NodeJS.ErrnoException).code ?? (error as Error).message)
  }
  const type = typeOf(stat)
  if (type !== undefined) {
    closeSync(descriptor)
    throw typeFailure(path, pin, type)
  }
  if (pin === undefined || `${stat.dev}:${stat.ino}` === pin.identity) return descriptor
  closeSync(descriptor)
  throw pinFailure(pin, path)
}

/**
 * A `file` descriptor whose path is neither a directory nor a regular file (`type`: what it is).
 * A pinned one was replaced since load: said as `pinFailure` says it when a symlink leads
 * elsewhere, else by what is there now.
 */
export function typeFailure(path: string, pin: Pin | undefined, type: string): RuntimeError {
  const what = typeDescription(type)
  if (pin === undefined) {
    return new RuntimeError(
      'RUNTIME_ERR_SPAWN_FAILED',
      `cannot open ${path}: it is ${what}, not a directory or a regular file`,
    )
  }
  return changed(pin, path, symlinkedTo(path) ?? `it is now ${what}`)
}

/**
 * A `file` descriptor that could not be opened (`code`: its errno name). ELOOP is a symlink on its
 * way, which the fork server never follows: for a pinned grant, said as `pinFailure` says it.
 */
export function openFailure(path: string, pin: Pin | undefined, code: string): RuntimeError {
  if (pin === undefined) {
    const why = code === 'ELOOP' ? `${code} (a symlink on its way: only real paths are opened)` : code
    return new RuntimeError('RUNTIME_ERR_SPAWN_FAILED', `cannot open ${path}: ${why}`)
  }
  if (code === 'ELOOP') return pinFailure(pin, path)
  return changed(pin, path, `it cannot be opened any more (${code})`)
}

/** A pinned `file` descriptor that is no longer the object qualified at load. */
export function pinFailure(pin: Pin, path: string): RuntimeError {
  return changed(pin, path, symlinkedTo(path) ?? 'it was replaced')
}

/** "it now leads to X (a symlink)" when `path` resolves elsewhere now; undefined if not (or gone). */
function symlinkedTo(path: string): string | undefined {
  try {
    const real = realpathSync(path)
    return real === path ? undefined : `it now leads to ${real} (a symlink)`
  } catch {
    return undefined
  }
}

function changed(pin: Pin, path: string, now: string): RuntimeError {
  return new RuntimeError(
    'RUNTIME_ERR_GRANT_CHANGED',
    `${pin.field}: ${path} is no longer what was qualified at load (${now}); the tool was not started: put it back, or reload the tool`,
  )
}
