import { closeName } from '@toolvisor/describe-v2'
import type { z } from 'zod'

/** One zod issue as much as is read here (zod 4's issues carry these fields). */
interface Issue {
  readonly code: string
  readonly path: readonly PropertyKey[]
  readonly message: string
  readonly keys?: readonly string[]
  readonly expected?: string
  readonly values?: readonly unknown[]
  /** An `invalid_union`: the issues of each alternative, their paths relative to the union's. */
  readonly errors?: readonly (readonly Issue[])[]
}

/**
 * The issues of a union mismatch that say what is wrong. An alternative that matched the value's
 * shape and failed further in (an entry object with a bad field, not the string an entry may also
 * be) names the real problem: its issues are taken, at their full paths. When every alternative
 * failed at the union itself, one issue says what each would have taken.
 */
function unionIssues(issue: Issue): Issue[] {
  const branches = issue.errors ?? []
  const deeper = branches.filter((branch) => branch.some((each) => each.path.length > 0 || each.errors))
  if (deeper.length === 1) {
    return deeper[0]!.flatMap((each) => expanded({ ...each, path: [...issue.path, ...each.path] }))
  }
  const taken = branches.flat().map((each) => {
    if (each.code === 'invalid_value') return (each.values ?? []).map((v) => JSON.stringify(v)).join(' or ')
    return each.expected === 'record' ? 'an object' : (each.expected ?? each.message)
  })
  return taken.length === 0
    ? [issue]
    : [{ code: 'invalid_type', path: issue.path, message: issue.message, expected: taken.join(' or ') }]
}

/** An issue, or the issues a union mismatch comes down to. */
function expanded(issue: Issue): Issue[] {
  return issue.code === 'invalid_union' ? unionIssues(issue) : [issue]
}

/**
 * The problems of a configuration, one line each: the JSON path (`$.serve.listen`,
 * `$.capabilities[0].backends`), what was expected there and what was found. An unknown key is
 * named with its path and, when one is close, the key that was probably meant.
 */
export function configProblems(error: z.ZodError, json: unknown, schema: z.ZodType): string[] {
  return (error.issues as readonly Issue[]).flatMap(expanded).flatMap((issue) => {
    if (issue.code === 'unrecognized_keys') {
      const known = keysAt(schema, issue.path)
      return (issue.keys ?? []).map(
        (key) => `${jsonPath([...issue.path, key])}: unknown key${hint(key, known)}`,
      )
    }
    const found = valueAt(json, issue.path)
    const got = found.present ? `got ${shown(found.value)}` : 'it is missing'
    const message = issue.code === 'invalid_type' ? `expected ${issue.expected}` : issue.message
    return [`${jsonPath(issue.path)}: ${message}, ${got}`]
  })
}

/** `$`, `.key` for a property, `[n]` for an item. */
export function jsonPath(path: readonly PropertyKey[]): string {
  return `$${path.map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`)).join('')}`
}

/** `; did you mean "x"?` for a close key, else the keys allowed there (when they are few). */
function hint(key: string, known: readonly string[]): string {
  const close = closeName(key, known)
  if (close !== undefined) return `; did you mean "${close}"?`
  if (known.length > 0 && known.length <= 12) return `; the keys here are ${known.join(', ')}`
  return known.length > 0 ? '; the keys are listed in toolvisor.schema.json' : ''
}

/** The keys of the object schema at a path of the document (items and optionals looked through). */
function keysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let at: z.ZodType | undefined = schema
  for (const part of [...path, undefined]) {
    at = unwrap(at)
    if (part === undefined || at === undefined) break
    const def = at.def as { type: string; shape?: Record<string, z.ZodType>; element?: z.ZodType }
    at = typeof part === 'number' ? def.element : def.shape?.[String(part)]
  }
  const shape = (at?.def as { shape?: Record<string, unknown> } | undefined)?.shape
  return shape ? Object.keys(shape) : []
}

/** The schema inside optional, default and union wrappers (a union: its object member). */
function unwrap(schema: z.ZodType | undefined): z.ZodType | undefined {
  let at = schema
  for (;;) {
    const def = at?.def as { type: string; innerType?: z.ZodType; options?: z.ZodType[] } | undefined
    if (def?.innerType) at = def.innerType
    else if (def?.type === 'union') at = def.options?.find((option) => option.def.type === 'object')
    else return at
  }
}

/** The value at a path of the document, if there is one. */
function valueAt(json: unknown, path: readonly PropertyKey[]): { present: boolean; value?: unknown } {
  let at = json
  for (const part of path) {
    if (typeof at !== 'object' || at === null || !(part in at)) return { present: false }
    at = (at as Record<PropertyKey, unknown>)[part]
  }
  return { present: true, value: at }
}

/** A value as the message shows it: JSON, cut short. */
function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value)
  return text.length > 60 ? `${text.slice(0, 57)}...` : text
}
