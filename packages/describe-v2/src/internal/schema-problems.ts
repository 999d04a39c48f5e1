/**
 * Why a declared JSON Schema does not compile, in our words and with the JSON path of the bad
 * keyword (`$.properties.level.type: expected one of "array", ...; got "strin"`), instead of ajv's
 * `data/properties/level/type must be equal to one of the allowed values`.
 */
import type { ErrorObject } from 'ajv'
import type { JsonSchema } from '../types.js'
import {
  cut,
  isPlainObject,
  jsonPath,
  jsonText,
  otherProblems,
  pointerSegments,
  show,
  typeArticle,
} from './text.js'

/** One thing wrong with a schema: where, from the schema's root (absent when ajv does not say), and why. */
export interface SchemaProblem {
  readonly at?: readonly PropertyKey[]
  readonly reason: string
}

/** The problems as one text, each path under `base` (the field that declared the schema). */
export function problemsText(problems: readonly SchemaProblem[], base: readonly PropertyKey[]): string {
  const texts = problems.map((problem) =>
    problem.at === undefined ? problem.reason : `${jsonPath([...base, ...problem.at])}: ${problem.reason}`,
  )
  const [first = 'does not compile', ...others] = texts
  return first + otherProblems(others)
}

/** A declared schema that does not compile; the message reads as from the schema's root (`$.type: ...`). */
export class SchemaCompileError extends Error {
  readonly problems: readonly SchemaProblem[]

  constructor(problems: readonly SchemaProblem[], options?: ErrorOptions) {
    super(problemsText(problems, []), options)
    this.name = 'SchemaCompileError'
    this.problems = problems
  }
}

/** The value at `at` inside `schema`, or `undefined`. */
function valueAt(schema: unknown, at: readonly PropertyKey[]): unknown {
  let value = schema
  for (const segment of at) {
    if (typeof value !== 'object' || value === null) return undefined
    value = (value as Record<PropertyKey, unknown>)[Array.isArray(value) ? segment : String(segment)]
  }
  return value
}

/** What one meta-schema error asked for, as the object of `expected`. */
function expectation(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>
  switch (error.keyword) {
    case 'type': {
      const types = Array.isArray(params.type) ? params.type : String(params.type).split(',')
      return types.map((type) => typeArticle(String(type))).join(' or ')
    }
    case 'enum':
      return `one of ${cut((params.allowedValues as unknown[]).map(jsonText).join(', '))}`
    case 'const':
      return jsonText(params.allowedValue)
    case 'minItems':
      return `at least ${String(params.limit)} item${params.limit === 1 ? '' : 's'}`
    case 'uniqueItems':
      return `no duplicate items (items ${String(params.j)} and ${String(params.i)} are the same)`
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return `a number ${String(params.comparison)} ${String(params.limit)}`
    default:
      return `a value that satisfies "${error.keyword}"`
  }
}

/** Keywords that only say which kind of value a branch wanted; others say what was wrong inside it. */
const kindKeywords = new Set(['type', 'enum', 'const'])

/**
 * ajv's meta-schema errors as problems: one per place, the deepest places only (an `anyOf` over
 * `/items` and `/items/0/type` is about `/items/0/type`), the alternatives of a place joined
 * (`one of "array", ..., or an array`), and what the schema holds there.
 */
export function metaProblems(schema: JsonSchema, errors: readonly ErrorObject[]): SchemaProblem[] {
  const relevant = errors.filter((error) => error.keyword !== 'anyOf' && error.keyword !== 'oneOf')
  const deepest = relevant.filter(
    (error) => !relevant.some((other) => other.instancePath.startsWith(`${error.instancePath}/`)),
  )
  const places = new Map<string, ErrorObject[]>()
  for (const error of deepest)
    places.set(error.instancePath, [...(places.get(error.instancePath) ?? []), error])
  const problems = [...places].map(([pointer, group]): SchemaProblem => {
    const inside = group.filter((error) => !kindKeywords.has(error.keyword))
    const expected = [...new Set((inside.length > 0 ? inside : group).map(expectation))]
    const at = pointerSegments(pointer)
    return { at, reason: `expected ${expected.join(', or ')}; got ${show(valueAt(schema, at))}` }
  })
  return problems.length > 0 ? problems : [{ at: [], reason: 'is not a valid JSON Schema (draft-07)' }]
}

/** The path of the first property `key` (document order) whose value passes `test`; no recursion. */
function findKey(schema: unknown, key: string, test: (value: unknown) => boolean): PropertyKey[] | undefined {
  const seen = new Set<unknown>()
  const stack: [unknown, PropertyKey[]][] = [[schema, []]]
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [value, at] = next
    if (typeof value !== 'object' || value === null || seen.has(value)) continue
    seen.add(value)
    if (isPlainObject(value) && Object.hasOwn(value, key) && test(value[key])) return [...at, key]
    const entries: [PropertyKey, unknown][] = Array.isArray(value)
      ? value.map((item, index) => [index, item])
      : Object.entries(value)
    for (const [segment, child] of entries.reverse()) stack.push([child, [...at, segment]])
  }
  return undefined
}

function isRegex(source: unknown): boolean {
  try {
    new RegExp(String(source), 'u')
    return true
  } catch {
    return false
  }
}

/** A problem located at `at` when it was found, else at no path. */
function located(at: PropertyKey[] | undefined, reason: string): SchemaProblem {
  return at === undefined ? { reason } : { at, reason }
}

/** What ajv threw while compiling a schema that passed the meta-schema, as a problem with a path. */
export function compileProblem(schema: JsonSchema, error: unknown): SchemaProblem {
  const message = error instanceof Error ? error.message : String(error)
  if (error instanceof RangeError) return { reason: `it is nested too deeply (${message})` }
  if (error instanceof SyntaxError && message.startsWith('Invalid regular expression')) {
    const at = findKey(schema, 'pattern', (value) => !isRegex(value))
    const got = at === undefined ? '' : `; got ${show(valueAt(schema, at))}`
    return located(at, `expected a regular expression (JavaScript, u flag)${got} (${message})`)
  }
  if (typeof (error as { missingRef?: unknown }).missingRef === 'string') {
    const at = findKey(schema, '$ref', (value) => message.includes(`reference ${String(value)} from`))
    const ref = at === undefined ? '' : ` ${show(valueAt(schema, at))}`
    const why = 'nothing in this schema has that path or $id, and no other schema is fetched'
    return located(at, `cannot resolve the reference${ref}: ${why}`)
  }
  return { reason: message }
}
