import { quoteInput, type ToolInputSchema } from '@toolvisor/toolbox'
import { BashError } from './errors.js'
import { ESCALATION_MODES, SANDBOX_MODES } from './modes.js'

/**
 * What an argument holds. `text`: a non-empty string (seed 001: `invalid command: expected a
 * non-empty string`); `id`: a task id (`invalid task_id: expected a string, got ""`); `name`: a
 * task name of `[a-z0-9-]`, at most 63; `positive`, `seconds` (0 or more), `boolean`; `string`:
 * any string (the caller checks it, in its own words); `escalation`: a mode `sandbox_permissions`
 * may ask for; `mode`: any sandbox mode.
 */
export type Kind =
  | 'text'
  | 'id'
  | 'name'
  | 'positive'
  | 'seconds'
  | 'boolean'
  | 'string'
  | 'escalation'
  | 'mode'

/** One argument of a tool. */
export interface Field {
  readonly kind: Kind
  readonly required?: true
  /** What the model reads about it. */
  readonly description: string
}

/** The arguments of a tool, by name, in the order the model reads them. */
export type Fields = Readonly<Record<string, Field>>

/** The type an argument of kind `K` has once parsed. */
export type ValueOf<K extends Kind> = K extends 'boolean'
  ? boolean
  : K extends 'positive' | 'seconds'
    ? number
    : string

/** The parsed arguments: each as its kind says, absent ones `undefined` unless required. */
export type Parsed<F extends Fields> = {
  readonly [K in keyof F]: F[K] extends { readonly required: true }
    ? ValueOf<F[K]['kind']>
    : ValueOf<F[K]['kind']> | undefined
}

/** The required task id argument every read, status and kill tool takes. */
export function taskId(description: string) {
  return { kind: 'id', required: true, description } as const
}

const NAME = /^[a-z0-9-]{1,63}$/

const SCHEMAS: Record<Kind, Record<string, unknown>> = {
  text: { type: 'string', minLength: 1 },
  id: { type: 'string', minLength: 1 },
  name: { type: 'string', pattern: NAME.source },
  positive: { type: 'number', exclusiveMinimum: 0 },
  seconds: { type: 'number', minimum: 0 },
  boolean: { type: 'boolean' },
  string: { type: 'string' },
  escalation: { type: 'string', enum: [...ESCALATION_MODES] },
  mode: { type: 'string', enum: [...SANDBOX_MODES] },
}

/** The JSON Schema the model is shown for `fields`. */
export function schemaOf(fields: Fields): ToolInputSchema {
  const properties = Object.fromEntries(
    Object.entries(fields).map(([key, field]) => [
      key,
      { ...SCHEMAS[field.kind], description: field.description },
    ]),
  )
  const required = Object.entries(fields)
    .filter(([, field]) => field.required)
    .map(([key]) => key)
  return { type: 'object', properties, required, additionalProperties: false }
}

/**
 * Checks a call's arguments against `fields` and returns them typed; throws
 * `BASH_ERR_INVALID_ARGUMENT` naming the first bad one, what it expects and what it got (quoted
 * short). Unknown keys are refused (decision 0009), never passed on.
 */
export function parseArgs<F extends Fields>(fields: F, raw: unknown): Parsed<F> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw invalid(`invalid arguments: expected an object, got ${quoteInput(raw)}`)
  }
  const args = raw as Record<string, unknown>
  for (const key of Object.keys(args)) {
    // Own keys only: `in` would take Object.prototype's names (`constructor`, `toString`) as fields.
    if (!Object.hasOwn(fields, key)) {
      const known = Object.keys(fields).join(', ')
      throw invalid(`invalid arguments: unknown key ${quoteInput(key)}; the keys are ${known}`)
    }
  }
  const parsed: Record<string, unknown> = {}
  for (const [key, field] of Object.entries(fields)) {
    const value = args[key]
    if (value === undefined) {
      if (field.required) throw invalid(problem(key, field.kind, value))
      continue
    }
    if (!fits(field.kind, value)) throw invalid(problem(key, field.kind, value))
    parsed[key] = value
  }
  return parsed as Parsed<F>
}

function fits(kind: Kind, value: unknown): boolean {
  switch (kind) {
    case 'text':
      return typeof value === 'string' && value.trim().length > 0
    case 'id':
      return typeof value === 'string' && value.length > 0
    case 'name':
      return typeof value === 'string' && NAME.test(value)
    case 'positive':
      return typeof value === 'number' && Number.isFinite(value) && value > 0
    case 'seconds':
      return typeof value === 'number' && Number.isFinite(value) && value >= 0
    case 'boolean':
      return typeof value === 'boolean'
    case 'string':
      return typeof value === 'string'
    case 'escalation':
      return (ESCALATION_MODES as readonly unknown[]).includes(value)
    case 'mode':
      return (SANDBOX_MODES as readonly unknown[]).includes(value)
  }
}

/** The message of a bad argument, in seed 001's form `invalid <key>: expected ..., got <value>`. */
function problem(key: string, kind: Kind, value: unknown): string {
  const got = value === undefined ? 'nothing' : quoteInput(value)
  switch (kind) {
    case 'text':
      return `invalid ${key}: expected a non-empty string`
    case 'id':
      return `invalid ${key}: expected a string, got ${got}`
    case 'name':
      return `invalid ${key}: expected 1 to 63 characters of a-z, 0-9 and -, got ${got}`
    case 'positive':
      return `invalid ${key}: expected a positive number, got ${got}`
    case 'seconds':
      return `invalid ${key}: expected a number of seconds, 0 or more, got ${got}`
    case 'boolean':
      return `invalid ${key}: expected a boolean, got ${got}`
    case 'string':
      return `invalid ${key}: expected a string, got ${got}`
    case 'escalation':
      return `invalid ${key}: expected one of ${ESCALATION_MODES.join(', ')}, got ${got}`
    case 'mode':
      return `invalid ${key}: expected one of ${SANDBOX_MODES.join(', ')}, got ${got}`
  }
}

/** A bad argument (its message is what the model reads). */
export function invalid(message: string): BashError {
  return new BashError('BASH_ERR_INVALID_ARGUMENT', message)
}
