/**
 * The arguments of the bash tools, declared through toolbox's `declareArgs` (the schema the model
 * reads and the check, from one declaration), in seed 001's words: the first problem of a call,
 * `invalid <key>: expected ..., got <value>` (quoted short), and unknown keys refused (decision
 * 0009), never passed on.
 */
import { quoteInput } from '@toolvisor/answers'
import { type ArgsRules, type Field, required } from '@toolvisor/toolbox'
import { BashError } from '../errors.js'
import { ESCALATION_MODES, SANDBOX_MODES, type SandboxMode } from '../modes.js'

/** How the bash tools word a call's problems (seed 001). */
export const BASH_ARGS: ArgsRules = {
  problems: 'first',
  notObject: (raw) => `invalid arguments: expected an object, got ${quoteInput(raw)}`,
  unknownKey: (key, known) =>
    `invalid arguments: unknown key ${quoteInput(key)}; the keys are ${known.join(', ')}`,
}

/**
 * A kind of argument: its schema, what a value must be, and the words of a bad one, `invalid
 * <key>: expected <expected>, got <value>` (`got nothing` for a missing one). `saysGot` false:
 * without the `got` part, as seed 001 says it of a command.
 */
function kind<T>(
  schema: Readonly<Record<string, unknown>>,
  expected: string,
  fits: (value: unknown) => value is T,
  saysGot = true,
): (description: string) => Field<T> {
  return (description) => ({
    schema,
    description,
    check(value, { key }) {
      if (fits(value)) return { value }
      const got = value === undefined ? 'nothing' : quoteInput(value)
      return { problem: `invalid ${key}: expected ${expected}${saysGot ? `, got ${got}` : ''}` }
    },
  })
}

const NAME = /^[a-z0-9-]{1,63}$/
const isString = (value: unknown): value is string => typeof value === 'string'
const isNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value)
const isMode =
  (modes: readonly SandboxMode[]) =>
  (value: unknown): value is SandboxMode =>
    (modes as readonly unknown[]).includes(value)

/** A non-empty string, not blanks only (seed 001: `invalid command: expected a non-empty string`). */
export const text = kind(
  { type: 'string', minLength: 1 },
  'a non-empty string',
  (value): value is string => isString(value) && value.trim().length > 0,
  false,
)
/** A task id: a non-empty string (`invalid task_id: expected a string, got ""`). */
export const id = kind(
  { type: 'string', minLength: 1 },
  'a string',
  (value): value is string => isString(value) && value.length > 0,
)
/** A task name: `[a-z0-9-]`, at most 63. */
export const taskName = kind(
  { type: 'string', pattern: NAME.source },
  '1 to 63 characters of a-z, 0-9 and -',
  (value): value is string => isString(value) && NAME.test(value),
)
/** A number over 0. */
export const positive = kind(
  { type: 'number', exclusiveMinimum: 0 },
  'a positive number',
  (value): value is number => isNumber(value) && value > 0,
)
/** A number of seconds, 0 or more. */
export const seconds = kind(
  { type: 'number', minimum: 0 },
  'a number of seconds, 0 or more',
  (value): value is number => isNumber(value) && value >= 0,
)
/** A boolean. */
export const flag = kind(
  { type: 'boolean' },
  'a boolean',
  (value): value is boolean => typeof value === 'boolean',
)
/** A terminal's columns or rows: a whole number from 1 to 65535 (what a terminal's size takes). */
export const cells = kind(
  { type: 'integer', minimum: 1, maximum: 65535 },
  'a whole number from 1 to 65535',
  (value): value is number => Number.isInteger(value) && (value as number) >= 1 && (value as number) <= 65535,
)
/** A number of milliseconds, 0 or more. */
export const milliseconds = kind(
  { type: 'number', minimum: 0 },
  'a number of milliseconds, 0 or more',
  (value): value is number => isNumber(value) && value >= 0,
)
/** Key names (`Enter`, `C-c`, `Up`): checked against the keys there are when typed. */
export const keyNames = kind(
  { type: 'array', items: { type: 'string', minLength: 1 }, maxItems: 256 },
  'an array of at most 256 key names',
  (value): value is string[] =>
    Array.isArray(value) && value.length <= 256 && value.every((key) => isString(key) && key.length > 0),
)
/** Any string: the caller checks it further, in its own words. */
export const anyString = kind({ type: 'string' }, 'a string', isString)
/** A mode `sandbox_permissions` may ask for. */
export const escalationMode = kind(
  { type: 'string', enum: [...ESCALATION_MODES] },
  `one of ${ESCALATION_MODES.join(', ')}`,
  isMode(ESCALATION_MODES),
)
/** The most names one call's `network_allow` may ask for. */
export const NETWORK_ALLOW_MAX = 16

/**
 * Network names one call may also reach (decision 0112): 1 to 16 strings, each checked as an
 * allow list entry when the call asks (`namesToAsk`), naming the first bad one by its place.
 */
export const networkNames = kind(
  { type: 'array', items: { type: 'string', minLength: 1 }, minItems: 1, maxItems: NETWORK_ALLOW_MAX },
  `an array of 1 to ${NETWORK_ALLOW_MAX} network names ("registry.npmjs.org", "*.github.com", "host:port")`,
  (value): value is string[] =>
    Array.isArray(value) &&
    value.length >= 1 &&
    value.length <= NETWORK_ALLOW_MAX &&
    value.every((name) => isString(name) && name.length > 0),
)
/** Any sandbox mode. */
export const sandboxMode = kind(
  { type: 'string', enum: [...SANDBOX_MODES] },
  `one of ${SANDBOX_MODES.join(', ')}`,
  isMode(SANDBOX_MODES),
)

/** The required task id argument every read, status and kill tool takes. */
export function taskId(description: string) {
  return required(id(description))
}

/** A bad argument (its message is what the model reads). */
export function invalid(message: string): BashError {
  return new BashError('BASH_ERR_INVALID_ARGUMENT', message)
}
