import { quoteInput } from '@toolvisor/answers'

/** The sub-commands of `processes`. */
export const COMMANDS = ['list', 'status', 'tail', 'read', 'page', 'output', 'stop', 'wait'] as const
/** One sub-command. */
export type Command = (typeof COMMANDS)[number]

/** Checked arguments of one `processes` call. */
export interface Args {
  readonly command: Command
  readonly process?: string
  /** tail: how many of the last events. */
  readonly n?: number
  /** read, page: the most events. */
  readonly max?: number
  /** page: the first event; output: the first byte. */
  readonly offset?: number
  /** output: the most bytes. */
  readonly length?: number
  /** output: which stream. */
  readonly stream?: 'stdout' | 'stderr'
  /** stop: SIGKILL at once. */
  readonly force?: boolean
  /** wait: the most seconds to wait for mail (0 to {@link MAX_WAIT_SECONDS}). */
  readonly timeout_seconds?: number
}

/** The longest `wait` (seconds). */
export const MAX_WAIT_SECONDS = 300

/** The bounds a call's numbers are checked against. */
export interface ArgBounds {
  /** The most events one tail, read or page returns. */
  readonly maxEvents: number
  /** The most bytes one answer holds (output's `length` is capped by it). */
  readonly resultBytes: number
}

/** Ids are short (`t12`, `proc-40`, `bash-3`, a name a starter chose): a longer one is no id. */
const MAX_ID = 128

const integer = (value: unknown, min: number, max: number): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max

/** Checks the model's arguments; returns them typed, or the error to answer (input quoted short). */
export function parseArgs(raw: unknown, bounds: ArgBounds): Args | string {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return 'arguments must be an object'
  const { command, process, n, max, offset, length, stream, force, timeout_seconds } = raw as Record<
    string,
    unknown
  >
  if (typeof command !== 'string' || !(COMMANDS as readonly string[]).includes(command))
    return `command must be one of ${COMMANDS.join(', ')}; got ${quoteInput(command)}`
  if (command !== 'list' && command !== 'wait' && (typeof process !== 'string' || process.length === 0))
    return `${command} needs "process": the id of one of this session's processes (see command "list")`
  if (process !== undefined && typeof process !== 'string')
    return `process must be a string (p1, t1, ...); got ${quoteInput(process)}`
  if (typeof process === 'string' && process.length > MAX_ID)
    return `no task or process ${quoteInput(process)}`
  const problems = [
    n !== undefined && !integer(n, 1, bounds.maxEvents)
      ? `n must be an integer from 1 to ${bounds.maxEvents}; got ${quoteInput(n)}`
      : '',
    max !== undefined && !integer(max, 1, bounds.maxEvents)
      ? `max must be an integer from 1 to ${bounds.maxEvents}; got ${quoteInput(max)}`
      : '',
    offset !== undefined && !integer(offset, 0, Number.MAX_SAFE_INTEGER)
      ? `offset must be an integer from 0; got ${quoteInput(offset)}`
      : '',
    length !== undefined && !integer(length, 1, bounds.resultBytes)
      ? `length must be an integer from 1 to ${bounds.resultBytes}; got ${quoteInput(length)}`
      : '',
    stream !== undefined && stream !== 'stdout' && stream !== 'stderr'
      ? `stream must be stdout or stderr; got ${quoteInput(stream)}`
      : '',
    force !== undefined && typeof force !== 'boolean'
      ? `force must be true or false; got ${quoteInput(force)}`
      : '',
    timeout_seconds !== undefined && !integer(timeout_seconds, 0, MAX_WAIT_SECONDS)
      ? `timeout_seconds must be an integer from 0 to ${MAX_WAIT_SECONDS}; got ${quoteInput(timeout_seconds)}`
      : '',
  ].filter(Boolean)
  if (problems.length > 0) return problems.join('; ')
  return Object.fromEntries(
    Object.entries({ command, process, n, max, offset, length, stream, force, timeout_seconds }).filter(
      ([, v]) => v !== undefined,
    ),
  ) as unknown as Args
}
