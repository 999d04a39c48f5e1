import { readdirSync, readFileSync } from 'node:fs'
import { constants } from 'node:os'
import {
  type Launch,
  openFailure,
  pinFailure,
  RuntimeError,
  type Spawned,
  type SpawnOptions,
  type TerminalSize,
  typeFailure,
  type WarmAnswer,
  type WarmPlan,
} from '@toolvisor/process-runtime'

/** What the fork server's messages and requests are made of (see `native/toolvisor-spawnd.c`). */

// The first name of each number (EAGAIN, not EWOULDBLOCK: as Node's own errors name it).
const errnoNames = new Map(
  Object.entries(constants.errno)
    .reverse()
    .map(([name, number]) => [number, name]),
)
const signalNames = new Map(Object.entries(constants.signals).map(([name, number]) => [number, name]))

/** The name of signal `number` as the fork server tells it (SIGKILL for one it cannot name). */
export function signalName(number: number): NodeJS.Signals {
  return (signalNames.get(number) ?? 'SIGKILL') as NodeJS.Signals
}

/** The most terminals the fork server relays at once (`MAX_TERMINALS` in toolvisor-spawnd.c). */
export const MAX_TERMINALS = 64

export type { TerminalSize }

/** The request resizing the terminal of the launch whose child is `pid`; throws for a size no terminal has. */
export function resizeMessage(pid: number, size: TerminalSize): string {
  const { columns, rows } = size
  const valid = (n: number) => Number.isInteger(n) && n >= 1 && n <= 0xffff
  if (!valid(columns) || !valid(rows)) {
    const why = `a terminal is 1 to 65535 columns and rows, not ${columns}x${rows}`
    throw new RuntimeError('RUNTIME_ERR_INVALID_INPUT', why)
  }
  return `z ${pid} ${columns} ${rows}`
}

/** The most a request may carry (the fork server's own bound is 64 MiB of base64). */
const MAX_REQUEST = 40 * 1024 * 1024

/** Launch `id` as the fork server reads it (base64 of `encode`); throws when it cannot be sent. */
export function requestOf(id: number, launch: Launch): string {
  const request = encode(id, launch).toString('base64')
  if (request.length > MAX_REQUEST) {
    const why = `cannot start ${launch.file}: its arguments and environment exceed ${MAX_REQUEST} bytes`
    throw new RuntimeError('RUNTIME_ERR_SPAWN_FAILED', why)
  }
  return request
}

/**
 * ID, CWD, FILE, ARGC, ARGV (argv[0] = FILE), ENVC, NAME=VALUE..., EXTRAS, then for each `p`;
 * `d` or `x`, LENGTH and the bytes; or `f`, PATH, PIN; then CGROUP_DIR (a v2 cgroup to be born
 * in, or empty), CGROUPS, the `cgroup.procs` files to join, LIMITS, RESOURCE SOFT HARD for each,
 * and COLUMNS ROWS of a terminal (0 0: none): NUL-separated, as toolvisor-spawnd reads it. A NUL
 * inside any string of it is refused here, as Node's spawn refuses it.
 */
export function encode(id: number, launch: Launch): Buffer {
  const env = Object.entries(launch.env).map(([name, value]) => `${name}=${value}`)
  const argv = [launch.file, ...launch.args]
  const strings = [
    String(id),
    launch.cwd,
    launch.file,
    String(argv.length),
    ...argv,
    String(env.length),
    ...env,
  ]
  const bad = [
    ...strings,
    ...launch.extraFds.map((fd) => (fd.kind === 'file' ? fd.path : '')),
    launch.cgroupDir ?? '',
    ...(launch.cgroups ?? []),
  ].find((field) => field.includes('\0'))
  if (bad !== undefined) {
    const why = `cannot start ${launch.file}: an argument, variable or path contains a NUL byte: ${JSON.stringify(bad.slice(0, 80))}`
    throw new RuntimeError('RUNTIME_ERR_SPAWN_FAILED', why)
  }
  const parts: (string | Uint8Array)[] = [...strings, String(launch.extraFds.length)]
  for (const fd of launch.extraFds) {
    if (fd.kind === 'file') parts.push('f', fd.path, fd.pin?.identity ?? '')
    else if (fd.kind === 'pipe') parts.push('p')
    else parts.push(fd.kind === 'data' ? 'd' : 'x', String(fd.data.length), fd.data)
  }
  const cgroups = launch.cgroups ?? []
  parts.push(launch.cgroupDir ?? '', String(cgroups.length), ...cgroups)
  const limits = launch.rlimits ?? []
  parts.push(String(limits.length))
  for (const limit of limits) parts.push(String(limit.resource), value(limit.soft), value(limit.hard))
  const terminal = launch.terminal
  parts.push(String(terminal?.columns ?? 0), String(terminal?.rows ?? 0))
  // A payload is not NUL-terminated: its length says where it ends.
  return Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(`${part}\0`) : part)))
}

/** Resolves what a "w" or "r" waits for with the words of its answer (undefined: none will come). */
export type Answered = (answer: readonly string[] | undefined) => void

/** The "w" payload (base64): CGROUP_DIR, CGROUPS, MAKE, WRITES; undefined when it holds a NUL. */
export function warmPayload(plan: WarmPlan): string | undefined {
  const writes = plan.writes.flatMap(([file, value, optional]) => [file, value, optional ? '1' : '0'])
  return payloadOf([plan.bornIn ?? '', ...list(plan.procsFiles), ...list(plan.make), ...list(writes)])
}

/** The "r" payload (base64): the cgroups to remove; undefined when one holds a NUL. */
export function removePayload(dirs: readonly string[]): string | undefined {
  return payloadOf(list(dirs))
}

function list(strings: readonly string[]): string[] {
  return [String(strings.length), ...strings]
}

function payloadOf(fields: readonly string[]): string | undefined {
  if (fields.some((field) => field.includes('\0'))) return undefined
  return Buffer.from(fields.map((field) => `${field}\0`).join('')).toString('base64')
}

/**
 * The answer to the "w" of `plan`: "v PID", or "v 0 ERRNO WHERE" (mkdir:I, write:I); none: the
 * server is gone, or the plan could not be sent (a NUL in a path).
 */
export function warmAnswer(plan: WarmPlan, answer: readonly string[] | undefined): WarmAnswer {
  if (answer === undefined) return { made: false, pid: undefined }
  const [pid, errno, where = ''] = answer
  if (errno === undefined) return { made: true, pid: Number(pid) > 0 ? Number(pid) : undefined }
  const code = errnoNames.get(Number(errno)) ?? `errno ${errno}`
  const [stage, index] = where.split(':')
  const write = stage === 'write' ? plan.writes[Number(index)] : undefined
  const problem =
    write !== undefined
      ? `cannot set ${write[0]} to ${write[1]}: ${code}`
      : `cannot make the cgroup ${plan.make[Number(index)] ?? where}: ${code}`
  return { made: false, pid: undefined, problem }
}

/** The answer to an "r": how many of its cgroups are still there (undefined: not done). */
export function removeAnswer(answer: readonly string[] | undefined): number | undefined {
  const failed = Number(answer?.[0])
  return Number.isInteger(failed) && failed >= 0 ? failed : undefined
}

/** A limit's value as the server reads it. */
function value(n: number): string {
  return Number.isFinite(n) ? String(Math.floor(n)) : 'inf'
}

/**
 * The error of a launch the server refused, as Node's spawn (or spawnLaunch) would give it. `tool`:
 * what names the launch (its file unless told).
 */
export function launchError(launch: Launch, errno: number, where: string, tool = launch.file): Error {
  const code = errnoNames.get(errno) ?? `errno ${errno}`
  const [stage, index, type] = where.split(':')
  if (stage === 'busy') {
    const why = `cannot start ${tool}: ${index} launches are already waiting for their exec in the fork server (a filesystem that does not answer?); try again once they fail at their deadline`
    return new RuntimeError('RUNTIME_ERR_SPAWN_FAILED', why)
  }
  const extra = index === undefined ? undefined : launch.extraFds[Number(index)]
  if (extra?.kind === 'file' && stage === 'pin' && extra.pin) return pinFailure(extra.pin, extra.path)
  if (extra?.kind === 'file' && stage === 'open') return openFailure(extra.path, extra.pin, code)
  if (extra?.kind === 'file' && stage === 'type') return typeFailure(extra.path, extra.pin, type ?? 'other')
  if (stage === 'terminal' && code === 'EAGAIN') {
    const why = `cannot start ${tool}: ${MAX_TERMINALS} terminals are open in the fork server already (its bound); end one first; nothing ran`
    return new RuntimeError('RUNTIME_ERR_SPAWN_FAILED', why)
  }
  if (stage === 'cgroup' || stage === 'rlimit' || stage === 'terminal') {
    const what =
      stage === 'cgroup'
        ? 'could not join its cgroup'
        : stage === 'rlimit'
          ? 'could not set its resource limits'
          : 'could not have a terminal'
    return new RuntimeError(
      'RUNTIME_ERR_SPAWN_FAILED',
      `cannot start ${tool}: it ${what} (${code}); nothing ran`,
    )
  }
  const error = new Error(
    stage === 'chdir'
      ? `spawn ${launch.file} ${code} (working directory ${launch.cwd})`
      : `spawn ${launch.file} ${code}`,
  ) as NodeJS.ErrnoException
  error.code = code
  error.errno = -errno
  return error
}

/**
 * How long a launch may wait for its exec before it fails alone: the bound `describe` and `check`
 * get too. A healthy launch takes a few milliseconds even under load; past this its child is stuck
 * before its exec (a working directory, an executable or a grant on a filesystem that does not
 * answer) or the server does not run, and the caller is better told than held.
 */
export const LAUNCH_DEADLINE_MS = 10_000

/** The error of a launch that got no answer within `deadlineMs` (the server is told to kill it). */
export function launchTimeout(tool: string, deadlineMs: number): RuntimeError {
  const head = `the launch of ${tool} did not start within ${deadlineMs / 1000} s`
  const tail = 'it was killed, and no other launch waited for it'
  const full = descriptorsFull()
  const why =
    full === undefined
      ? `${head}: the fork server had no word of its exec (its working directory, its executable or a grant on a filesystem that does not answer?); ${tail}`
      : // Its descriptors come over the channel, and a process with no room for them never hears the answer.
        `${head}: this process is out of file descriptors (${full}), so the launch's descriptors could not reach it; ${tail}; close some or raise the limit (ulimit -n)`
  return new RuntimeError('RUNTIME_ERR_LAUNCH_TIMEOUT', why)
}

/** `N of M open` when this process has no room left for a launch's descriptors (under 8 free). */
function descriptorsFull(): string | undefined {
  try {
    const limit = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1]
    const open = readdirSync('/proc/self/fd').length
    return limit !== undefined && Number(limit) - open < 8 ? `${open} of ${limit} open` : undefined
  } catch (error) {
    // No room even to look: that is the answer.
    const code = (error as NodeJS.ErrnoException).code
    return code === 'EMFILE' || code === 'ENFILE' ? 'no room left even to count them' : undefined
  }
}

/** Options of a {@link ForkServer}. */
export interface ForkServerOptions {
  /** How long a launch may wait for its exec, in ms (default 10,000). */
  readonly deadlineMs?: number
}

/** A launch sent, waiting for its pid and its descriptors. */
/** Launch `id` as it waits for the server's answers. */
export function pendingOf(
  id: number,
  launch: Launch,
  options: SpawnOptions,
  resolve: Pending['resolve'],
  reject: Pending['reject'],
): Pending {
  const tool = options.tool ?? launch.file
  const stdoutInSlabs = options.stdoutInSlabs ?? false
  return {
    id,
    launch,
    tool,
    stdoutInSlabs,
    handles: [],
    written: [],
    expected: 0,
    received: 0,
    resolve,
    reject,
  }
}

export interface Pending {
  readonly id: number
  readonly launch: Launch
  readonly tool: string
  readonly stdoutInSlabs: boolean
  /** Its deadline (see `#expire`). */
  timer?: NodeJS.Timeout
  readonly handles: (object | undefined)[]
  /** Bytes of each descriptor's payload the server wrote already. */
  readonly written: number[]
  /** How many descriptors the server passes (its `s` answer tells). */
  expected: number
  received: number
  pid?: number
  exit?: [number | null, NodeJS.Signals | null]
  resolve(spawned: Spawned): void
  reject(error: Error): void
}
