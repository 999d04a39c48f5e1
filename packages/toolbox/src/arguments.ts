/**
 * The one way a built-in tool declares its arguments: each one a `Field` (its JSON Schema, its
 * description, its check), and from the same declaration both the schema the model reads and the
 * check of a call, so the two cannot drift. The words of a problem are each tool's own (its seed's
 * texts); what differs between tools (unknown keys, one problem or all) is a rule of its
 * declaration. Binary tools are declared by their describe documents (`describe-v2`), not here.
 */
import type { JsonSchema } from '@toolvisor/describe-v2'
import type { ToolInputSchema } from './types.js'

/** What a check makes of a value: the value to pass on, or what is wrong with it, in the model's words. */
export type Checked<T> = { readonly value: T } | { readonly problem: string }

/** Where a value is checked. */
export interface FieldContext {
  /** The argument's name. */
  readonly key: string
  /** Whether it is required in this call (`required`, or `requiredWhen` said so). */
  readonly required: boolean
  /** The checked values of the fields declared before it (absent ones left out). */
  readonly earlier: Readonly<Record<string, unknown>>
}

/** One argument of a built-in tool. */
export interface Field<T> {
  /** Its JSON Schema, without the description (`{ type: 'integer', minimum: 1 }`). */
  readonly schema: JsonSchema
  /**
   * What the model reads about it: the schema's last key. Absent, or a boolean schema: the
   * schema is shown as it is.
   */
  readonly description?: string
  /** Listed in the schema's `required`: an absent value is checked too (and refused in the check's words). */
  readonly required?: boolean
  /**
   * Required when the fields before it say so (the schema cannot say it: its description does):
   * then an absent value is checked too. Not listed in the schema's `required`.
   */
  requiredWhen?(earlier: Readonly<Record<string, unknown>>): boolean
  /** With `problems: 'all'`: a problem here ends the check, as the fields after it are read in its light. */
  readonly stops?: boolean
  /** Checks a value that is there, or an absent one (`undefined`) when it is required. */
  check(value: unknown, at: FieldContext): Checked<T>
}

/** The arguments of a tool, by name, in the order the model reads them and they are checked. */
export type Fields = Readonly<Record<string, Field<unknown>>>

/** The checked arguments: each as its field's check gives it; an optional one absent is `undefined`. */
export type ArgsOf<F extends Fields> = {
  readonly [K in keyof F]: F[K] extends Field<infer T>
    ? F[K] extends { readonly required: true }
      ? T
      : T | undefined
    : never
}

/** What differs between the tools that declare arguments: the words around the fields' own, and how many problems a call hears. */
export interface ArgsRules {
  /** The problem of arguments that are not a JSON object. */
  notObject(raw: unknown): string
  /**
   * The problem of a key no field declares (given it and the declared keys), checked before any
   * field. Absent: such a key is dropped.
   */
  readonly unknownKey?: (key: string, known: readonly string[]) => string
  /** `first`: the first problem alone; `all`: each one, up to a field that `stops`, joined with `; `. */
  readonly problems: 'first' | 'all'
}

/** A tool's declared arguments: the schema the model reads and the check of a call, from one declaration. */
export interface DeclaredArgs<F extends Fields> {
  readonly fields: F
  /** `argsSchema(fields)`. */
  readonly schema: ToolInputSchema
  /** The arguments of a call, checked: typed, absent ones and dropped keys left out; or the problem. */
  parse(raw: unknown): Checked<ArgsOf<F>>
}

/** `field`, required. */
export function required<T>(field: Field<T>): Field<T> & { readonly required: true } {
  return { ...field, required: true }
}

/**
 * The JSON Schema the model is shown for `fields`: each field's schema with its description last,
 * the required ones listed, no other key (even for a tool that drops unknown keys).
 */
export function argsSchema(fields: Fields): ToolInputSchema {
  const entries = Object.entries(fields)
  const properties = Object.fromEntries(
    entries.map(([key, field]) => [
      key,
      field.description === undefined || typeof field.schema === 'boolean'
        ? field.schema
        : { ...field.schema, description: field.description },
    ]),
  )
  const required = entries.filter(([, field]) => field.required === true).map(([key]) => key)
  return { type: 'object', properties, required, additionalProperties: false }
}

/** Declares a tool's arguments: its schema and its check, both from `fields`, worded as `rules` say. */
export function declareArgs<F extends Fields>(fields: F, rules: ArgsRules): DeclaredArgs<F> {
  return {
    fields,
    schema: argsSchema(fields),
    parse: (raw) => parseArgs(fields, rules, raw),
  }
}

function parseArgs<F extends Fields>(fields: F, rules: ArgsRules, raw: unknown): Checked<ArgsOf<F>> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { problem: rules.notObject(raw) }
  const args = raw as Readonly<Record<string, unknown>>
  if (rules.unknownKey !== undefined) {
    // Own keys only: `in` would take Object.prototype's names (`constructor`) for fields.
    const unknown = Object.keys(args).find((key) => !Object.hasOwn(fields, key))
    if (unknown !== undefined) return { problem: rules.unknownKey(unknown, Object.keys(fields)) }
  }
  const parsed: Record<string, unknown> = {}
  const problems: string[] = []
  for (const [key, field] of Object.entries(fields)) {
    const value = Object.hasOwn(args, key) ? args[key] : undefined
    const required = field.required === true || (field.requiredWhen?.(parsed) ?? false)
    if (value === undefined && !required) continue
    const checked = field.check(value, { key, required, earlier: parsed })
    if ('value' in checked) {
      if (checked.value !== undefined) parsed[key] = checked.value
      continue
    }
    problems.push(checked.problem)
    if (rules.problems === 'first' || field.stops === true) break
  }
  if (problems.length > 0) return { problem: problems.join('; ') }
  return { value: parsed as ArgsOf<F> }
}
