/**
 * Finding the id of a message too large to parse, from its two ends only. A top-level `"id"` is
 * found where clients put it: among the first members (`{"jsonrpc":"2.0","id":7,...`) or as the
 * last one (`...,"jsonrpc":"2.0","id":7}`, the SDK client's order). Anywhere else it would take a
 * parse of the whole message, which is what the limit refuses, so the answer then has `id: null`.
 */

// An integer or a string without surprises; an escaped string is parsed by JSON.parse below.
const ID = String.raw`(-?\d{1,16}|"(?:[^"\\]|\\.){0,200}")`
const FIRST = new RegExp(
  String.raw`^\s*\{\s*(?:"(?:jsonrpc|method)"\s*:\s*"(?:[^"\\]|\\.){0,100}"\s*,\s*){0,2}"id"\s*:\s*${ID}\s*[,}]`,
)
// The closing brace right after the value makes this `"id"` a member of the outermost object.
const LAST = new RegExp(String.raw`[{,]\s*"id"\s*:\s*${ID}\s*\}\s*$`)

/** The request id at either end of an unparsed message, or null when it is not there (or not exact). */
export function recoverId(head: string, tail: string): string | number | null {
  const found = FIRST.exec(head)?.[1] ?? LAST.exec(tail)?.[1]
  if (found === undefined) return null
  const id = JSON.parse(found) as string | number
  return typeof id === 'number' && !Number.isSafeInteger(id) ? null : id
}
