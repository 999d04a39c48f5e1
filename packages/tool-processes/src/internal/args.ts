/**
 * The arguments of `processes` and of the `slug.send` companions, declared through toolbox's
 * `declareArgs` (the schema the model reads and the check, from one declaration), in this
 * package's words: `<key> must be ...; got <value>` (quoted short).
 */
import { quoteInput } from '@toolvisor/answers'
import {
  type ArgsOf,
  type ArgsRules,
  declareArgs,
  type Field,
  type LoadedTool,
  required,
} from '@toolvisor/toolbox'
import { DEFAULT_KEYS_WAIT_MS, MAX_KEYS_WAIT_MS } from './terminal.js'

/** The sub-commands of `processes`. */
export const COMMANDS = [
  'list',
  'status',
  'tail',
  'read',
  'page',
  'output',
  'stop',
  'wait',
  'screen',
  'keys',
] as const
/** One sub-command. */
export type Command = (typeof COMMANDS)[number]

export { DEFAULT_KEYS_WAIT_MS, MAX_KEYS_WAIT_MS }

/** The longest `wait` (seconds). */
export const MAX_WAIT_SECONDS = 300
/** How many events `tail` gives when `n` is absent, and `read` and `page` when `max` is. */
export const DEFAULT_TAIL = 20
export const DEFAULT_READ = 100
/** How long `wait` waits when `timeout_seconds` is absent. */
export const DEFAULT_WAIT_SECONDS = 30

/** The bounds a call's numbers are checked against (and the schema shows). */
export interface ArgBounds {
  /** The most events one tail, read or page returns. */
  readonly maxEvents: number
  /** The most bytes one answer holds (output's `length` is capped by it). */
  readonly resultBytes: number
}

/** Ids are short (`t12`, `proc-40`, `bash-3`, a name a starter chose): a longer one is no id. */
const MAX_ID = 128

const NOT_OBJECT = () => 'arguments must be an object'

/**
 * `processes` answers every problem of a call at once (past a bad command or process, which the
 * rest is read in the light of), and drops a key it does not know.
 */
const PROCESSES_ARGS: ArgsRules = { problems: 'all', notObject: NOT_OBJECT }

/** `send` answers the first problem, and refuses a key it does not know. */
const SEND_ARGS: ArgsRules = {
  problems: 'first',
  notObject: NOT_OBJECT,
  unknownKey: (key, known) =>
    `unknown argument ${quoteInput(key)}: the arguments are ${known.map((k) => `"${k}"`).join(' and ')}`,
}

/** An argument refused unless it `fits`, in the words `<key> must be <expected>; got <value>`. */
function must<T>(
  schema: Readonly<Record<string, unknown>>,
  expected: string,
  fits: (value: unknown) => value is T,
  description: string,
): Field<T> {
  return {
    schema,
    description,
    check: (value, { key }) =>
      fits(value) ? { value } : { problem: `${key} must be ${expected}; got ${quoteInput(value)}` },
  }
}

/** An integer from `min` (to `max`, when given). */
function integer(description: string, min: number, max?: number): Field<number> {
  const top = max ?? Number.MAX_SAFE_INTEGER
  return must(
    max === undefined ? { type: 'integer', minimum: min } : { type: 'integer', minimum: min, maximum: max },
    max === undefined ? `an integer from ${min}` : `an integer from ${min} to ${max}`,
    (value): value is number =>
      typeof value === 'number' && Number.isInteger(value) && value >= min && value <= top,
    description,
  )
}

/** One of `values` (`expected` says which, as the model reads it). */
function oneOf<const V extends string>(
  description: string,
  values: readonly V[],
  expected: string,
): Field<V> {
  const fits = (value: unknown): value is V => (values as readonly unknown[]).includes(value)
  return must({ type: 'string', enum: [...values] }, expected, fits, description)
}

/** `process`: required by every command but list and wait; a string there too. */
const PROCESS: Field<string> = {
  schema: { type: 'string' },
  description:
    "the process or task id (t1, p1, bash-1, bg-1, or a oneshot's proc-3); not for list; optional for wait",
  stops: true,
  requiredWhen: ({ command }) => command !== 'list' && command !== 'wait',
  check(value, { required, earlier }) {
    if (required && (typeof value !== 'string' || value.length === 0))
      return {
        problem: `${String(earlier.command)} needs "process": the id of one of this session's processes (see command "list")`,
      }
    if (typeof value !== 'string')
      return { problem: `process must be a string (p1, t1, ...); got ${quoteInput(value)}` }
    if (value.length > MAX_ID) return { problem: `no task or process ${quoteInput(value)}` }
    return { value }
  },
}

/** The arguments of `processes`; the numbers the model reads are the operator's bounds. */
export function processesArgs(bounds: ArgBounds) {
  return declareArgs(
    {
      command: {
        ...required(oneOf(COMMANDS.join(', '), COMMANDS, `one of ${COMMANDS.join(', ')}`)),
        stops: true,
      },
      process: PROCESS,
      n: integer(`tail: how many events (default ${DEFAULT_TAIL})`, 1, bounds.maxEvents),
      max: integer(`read, page: the most events (default ${DEFAULT_READ})`, 1, bounds.maxEvents),
      offset: integer('page: the first event (0-based); output: the first byte (default 0)', 0),
      length: integer('output: the most bytes', 1, bounds.resultBytes),
      stream: oneOf('output: which stream (default stdout)', ['stdout', 'stderr'], 'stdout or stderr'),
      force: must(
        { type: 'boolean' },
        'true or false',
        (value): value is boolean => typeof value === 'boolean',
        'stop: SIGKILL at once instead of the declared cancel',
      ),
      timeout_seconds: integer(
        `wait: the most seconds to wait for mail (default ${DEFAULT_WAIT_SECONDS})`,
        0,
        MAX_WAIT_SECONDS,
      ),
      text: must(
        { type: 'string' },
        'a string',
        (value): value is string => typeof value === 'string',
        'keys: text to type first, as is (UTF-8)',
      ),
      keys: must(
        { type: 'array', items: { type: 'string', minLength: 1 }, maxItems: 256 },
        'an array of at most 256 key names',
        (value): value is string[] =>
          Array.isArray(value) &&
          value.length <= 256 &&
          value.every((key) => typeof key === 'string' && key.length > 0),
        'keys: keys to press after the text, by name (Enter, Tab, Escape, Up, C-c, C-d, F1, M-x, ...)',
      ),
      until: must(
        { type: 'string' },
        'a string',
        (value): value is string => typeof value === 'string',
        'keys: stop waiting once this text shows (matched literally)',
      ),
      wait_ms: integer(
        `keys: the most milliseconds to wait for the answer (default ${DEFAULT_KEYS_WAIT_MS})`,
        0,
        MAX_KEYS_WAIT_MS,
      ),
      columns: integer('keys: resize the terminal to this width first (with rows)', 1, 65535),
      rows: integer('keys: resize the terminal to this height first (with columns)', 1, 65535),
    },
    PROCESSES_ARGS,
  )
}

/** Checked arguments of one `processes` call. */
export type Args = ArgsOf<ReturnType<typeof processesArgs>['fields']>

/**
 * The arguments of `slug.send`: `process`, a handle of the family, and `event`, whose schema is
 * the declared `input.event` verbatim (checked against it by the caller, once the process is known).
 */
export function sendArgs(loaded: LoadedTool) {
  const { slug } = loaded.spec
  return declareArgs(
    {
      process: required<string>({
        schema: { type: 'string' },
        description: `the handle of a running ${slug} process (p1, p2, ...)`,
        check: (value) =>
          typeof value === 'string' && value.length > 0 && value.length <= MAX_ID
            ? { value }
            : {
                problem: `"process" must be the handle of a running process (p1, p2, ...); got ${quoteInput(value)}`,
              },
      }),
      event: required<unknown>({
        schema: loaded.spec.process.input?.event ?? {},
        check: (value) =>
          value === undefined
            ? { problem: '"event" is required: the event to send, as the input schema says' }
            : { value },
      }),
    },
    SEND_ARGS,
  )
}
