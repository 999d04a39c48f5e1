/** Small helpers that turn values and paths into the short texts error messages quote. */

const longest = 60

/** True for `{...}` (not null, not an array, not a class instance): what JSON objects parse to. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

/**
 * A value as a message quotes it after `got`: strings JSON-quoted (and cut at 60 characters),
 * scalars as JSON text, containers by kind. Never throws, whatever the value.
 */
export function show(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return quote(value, longest)
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : String(value)
    case 'boolean':
      return String(value)
    case 'undefined':
      return 'nothing'
    case 'bigint':
      return 'a bigint'
    case 'function':
      return 'a function'
    case 'symbol':
      return 'a symbol'
    default:
      if (value === null) return 'null'
      return Array.isArray(value) ? 'an array' : 'an object'
  }
}

/** `text` JSON-quoted, cut to `max` code points with `…` after the quote when it was longer. */
export function quote(text: string, max: number): string {
  // 2 * max UTF-16 units always hold the first `max` code points, without scanning a huge text.
  const head = Array.from(text.slice(0, max * 2))
    .slice(0, max)
    .join('')
  return head.length === text.length ? JSON.stringify(text) : `${JSON.stringify(head)}…`
}

const plainKey = /^[A-Za-z_$][A-Za-z0-9_$-]*$/

/** A JSON path in the `$.args[1].mode` form; keys that are not plain names are `["quoted"]`. */
export function jsonPath(segments: readonly PropertyKey[]): string {
  let path = '$'
  for (const segment of segments) {
    if (typeof segment === 'number') path += `[${segment}]`
    else if (typeof segment === 'symbol') path += `[${String(segment)}]`
    else if (plainKey.test(segment)) path += `.${segment}`
    else path += `[${JSON.stringify(segment)}]`
  }
  return path
}

/** The segments of a JSON Pointer (`/items/0/a~1b`), unescaped; array indices become numbers. */
export function pointerSegments(pointer: string): PropertyKey[] {
  if (pointer === '') return []
  return pointer
    .slice(1)
    .split('/')
    .map((raw) => {
      const segment = raw.replace(/~1/g, '/').replace(/~0/g, '~')
      return /^(0|[1-9][0-9]*)$/.test(segment) ? Number(segment) : segment
    })
}

/** Most items a message lists before it says how many more there are. */
export const LISTED = 5

/** `items` joined by `; `, at most `max` of them, then `and N more`: a message stays bounded. */
export function listed(items: readonly string[], max = LISTED): string {
  const shown = items.slice(0, max)
  if (items.length > max) shown.push(`and ${items.length - max} more`)
  return shown.join('; ')
}

/**
 * The problems after the first one, as a suffix: ` (and 1 other problem: $.a: ...)`; empty when
 * there are none. Each is listed (bounded by {@link listed}), not only counted.
 */
export function otherProblems(others: readonly string[]): string {
  if (others.length === 0) return ''
  const count = `${others.length} other problem${others.length === 1 ? '' : 's'}`
  return ` (and ${count}: ${listed(others)})`
}

/** A value as JSON text (`undefined` and functions, which have none, as `String` gives them). */
export function jsonText(value: unknown): string {
  return JSON.stringify(value) ?? String(value)
}

/** `text` cut to 80 characters, `…` marking the cut. */
export function cut(text: string): string {
  return text.length > 80 ? `${text.slice(0, 79)}…` : text
}

const articles: Readonly<Record<string, string>> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  integer: 'an integer',
  boolean: 'a boolean',
  object: 'an object',
  array: 'an array',
  null: 'null',
}

/** A JSON type as a message says it (`an integer`, `a string`); an unknown name as it is. */
export function typeArticle(type: string): string {
  return articles[type] ?? type
}
