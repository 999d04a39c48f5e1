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

/** `1 other problem` / `3 other problems`. */
export function otherProblems(count: number): string {
  return `${count} other problem${count === 1 ? '' : 's'}`
}
