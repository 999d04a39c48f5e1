/**
 * The model's argument values checked against what it was shown (`inputSchema`): the type of each
 * value, no key the schema lacks, and no value that would reach argv as an option. Decision 0009
 * says which strings count as numbers and booleans and why.
 */
import type { ArgSpec, BackingType } from '../types.js'
import { closeName } from './similar.js'
import { show } from './text.js'

/** One thing wrong with the values: the argument (declared, or a key the model sent) and why. */
export interface ValueProblem {
  readonly argument: string
  readonly reason: string
  /** About the schema (a type, an unknown key): the message then lists the arguments that exist. */
  readonly schema: boolean
}

/** What one value becomes: its text for the tool, a problem, or nothing (omitted). */
export type Checked = { readonly text: string } | { readonly problem: ValueProblem } | undefined

/** The JSON grammar of a number: a string in it counts as that number (decision 0009). */
const numberLiteral = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/

const expectedText: Readonly<Record<BackingType, string>> = {
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  boolean: 'a boolean (true or false)',
}

function schemaProblem(arg: ArgSpec, reason: string): { problem: ValueProblem } {
  return { problem: { argument: arg.name, reason, schema: true } }
}

/** A number, or a string holding one in JSON syntax, as a number; else `undefined`. */
function numberOf(value: unknown): number | undefined {
  if (typeof value === 'number') return value
  return typeof value === 'string' && numberLiteral.test(value) ? Number(value) : undefined
}

/** The text of a value for a numeric argument: the JSON text of the number it means. */
function numericText(arg: ArgSpec, value: unknown): { text: string } | { problem: ValueProblem } {
  const number = numberOf(value)
  const got = `got ${show(value)}`
  if (number === undefined || !Number.isFinite(number)) {
    return schemaProblem(arg, `expected ${expectedText[arg.backingType]}; ${got}`)
  }
  if (arg.backingType === 'integer' && !Number.isInteger(number)) {
    return schemaProblem(arg, `expected an integer; ${got}`)
  }
  if (arg.backingType === 'integer' && !Number.isSafeInteger(number)) {
    const bound = Number.MAX_SAFE_INTEGER
    return schemaProblem(
      arg,
      `expected an integer from -${bound} to ${bound} (beyond, digits are lost); ${got}`,
    )
  }
  return { text: JSON.stringify(number) }
}

/** The text of a present value by the argument's backing type (ruling 2, decision 0009). */
function typedText(arg: ArgSpec, value: unknown): { text: string } | { problem: ValueProblem } {
  if (typeof value === 'number' && !Number.isFinite(value)) {
    // Not a JSON value: only a library caller can pass it, and the arguments would not help it.
    return {
      problem: { argument: arg.name, reason: `expected a finite number; got ${show(value)}`, schema: false },
    }
  }
  switch (arg.backingType) {
    case 'string':
      if (typeof value === 'string') return { text: value }
      // A number or boolean for a string: its JSON text is what the string would have been.
      if (typeof value === 'number' || typeof value === 'boolean') return { text: JSON.stringify(value) }
      break
    case 'boolean':
      if (value === true || value === false || value === 'true' || value === 'false')
        return { text: String(value) }
      break
    default:
      return numericText(arg, value)
  }
  return schemaProblem(arg, `expected ${expectedText[arg.backingType]}; got ${show(value)}`)
}

/**
 * A value that starts with `-` in a word of its own (`positional`, the value of `dashdashspace`)
 * is read as an option by most parsers: refused unless the tool allows it or it is a number for a
 * numeric argument (its text is then a JSON number, never an option name).
 */
function injects(arg: ArgSpec, text: string): boolean {
  if (arg.mode !== 'positional' && arg.mode !== 'dashdashspace') return false
  if (arg.allowDash === true || arg.backingType === 'number' || arg.backingType === 'integer') return false
  return text.startsWith('-')
}

/** One declared argument's value checked: its text, a problem, or `undefined` when omitted. */
export function checkValue(arg: ArgSpec, value: unknown): Checked {
  const problem = (reason: string): Checked => ({ problem: { argument: arg.name, reason, schema: false } })
  if (value === undefined || value === null) {
    if (!arg.required) return undefined
    return problem(value === null ? 'required, got null' : 'required, missing')
  }
  const typed = typedText(arg, value)
  if ('problem' in typed) return typed
  const { text } = typed
  if (injects(arg, text)) {
    return problem(
      `${show(text)} starts with "-", which the tool would read as an option; this argument does not accept values that start with "-"`,
    )
  }
  // argv and the environment are C strings: a NUL would cut the value (Node refuses it outright).
  if (arg.mode !== 'stdin' && text.includes('\0')) {
    return problem(`contains a NUL character, which cannot be passed by ${arg.mode}`)
  }
  return typed
}

/** The keys of `values` that name no declared argument, each with its closest name when one is close. */
export function unknownKeys(args: readonly ArgSpec[], values: Record<string, unknown>): ValueProblem[] {
  const names = args.map((arg) => arg.name)
  return Object.keys(values)
    .filter((key) => !names.includes(key))
    .map((key) => {
      const meant = closeName(key, names)
      const guess = meant === undefined ? '' : ` (did you mean ${show(meant)}?)`
      return { argument: key, reason: `no such argument${guess}`, schema: true }
    })
}

/** The arguments that exist, for a message: `"times" (integer, required), "path" (string, optional)`. */
export function argumentList(args: readonly ArgSpec[]): string {
  if (args.length === 0) return 'this tool takes no arguments'
  const each = args.map(
    (arg) => `${show(arg.name)} (${arg.backingType}, ${arg.required ? 'required' : 'optional'})`,
  )
  return `the arguments are ${each.join(', ')}`
}
