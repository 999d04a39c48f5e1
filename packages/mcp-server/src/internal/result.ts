import type { CallToolResult } from '@modelcontextprotocol/server'
import type { Tool, ToolResult } from '@toolvisor/toolbox'

/**
 * True for a plain JSON object (not an array, not null, not a class instance): the only shape MCP
 * accepts in `structuredContent`.
 */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

/**
 * A registry result as an MCP `CallToolResult`: the one conversion every result takes, for
 * `tools/call` and `tasks/result` alike (stdio, HTTP and the bridge all serve these two).
 *
 * - `meta`: every field reaches the client in `_meta` under its own name, unprefixed
 *   (`_meta.exitCode`, `_meta.backgroundId`, ...), next to the server's namespaced keys
 *   (`SERVER_META_KEYS`), which win: a field named like one of them is left out. Only JSON
 *   crosses: a field whose value is `undefined`, a function, a non-finite number or one
 *   `JSON.stringify` throws on (a BigInt, a cycle) is left out, never thrown; inside a field the
 *   value is what JSON text makes of it, a non-finite number dropped like `undefined`. No field
 *   left: no `_meta`.
 * - `structuredContent`: only a JSON object; anything else (a jsonl oneshot's event array, a bare
 *   string) is left out, because MCP requires an object there and the text content carries it.
 */
export function toCallToolResult(result: ToolResult): CallToolResult {
  const content = result.content.map((item) => ({ type: 'text' as const, text: item.text }))
  const meta = metaFields(result.meta)
  return {
    content,
    isError: result.isError,
    ...(isJsonObject(result.structuredContent) ? { structuredContent: result.structuredContent } : {}),
    ...(meta ? { _meta: meta } : {}),
  }
}

/**
 * A result's `meta` as `_meta` fields (see `toCallToolResult`); `undefined` when none is left.
 * Built with `Object.fromEntries`, so a field named `__proto__` stays a field.
 */
export function metaFields(meta: ToolResult['meta']): Record<string, unknown> | undefined {
  let entries: Array<[string, unknown]>
  try {
    entries = Object.entries(meta ?? {})
  } catch {
    return undefined
  }
  const fields = entries
    .filter(([key]) => !SERVER_META_KEYS.has(key))
    .map(([key, value]): [string, unknown] => [key, jsonValue(value)])
    .filter(([, value]) => value !== undefined)
  return fields.length > 0 ? Object.fromEntries(fields) : undefined
}

/** The JSON form of `value`, `undefined` when it has none (or `JSON.stringify` throws: a cycle, a BigInt). */
function jsonValue(value: unknown): unknown {
  try {
    const text = JSON.stringify(value, (_key, item: unknown) =>
      typeof item === 'number' && !Number.isFinite(item) ? undefined : item,
    )
    return text === undefined ? undefined : JSON.parse(text)
  } catch {
    return undefined
  }
}

/** An error result with one text item. */
export function errorResult(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true }
}

/** The message of anything thrown, for a one-line report. */
export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message
  return String(error)
}

/**
 * The key under which a result's `_meta` carries its UI cards: `{ call, result }`, seed 001's
 * `presentCall`/`presentResult` of the tool that ran (decision 0037). Absent for tools without them.
 */
export const PRESENTATION_META_KEY = 'toolvisor/presentation'

/** The key under which a result's `_meta` counts progress events that were not sent. */
export const PROGRESS_META_KEY = 'toolvisor/progress'

/** The `_meta` keys this server sets itself: a result's `meta` field of the same name never crosses. */
export const SERVER_META_KEYS: ReadonlySet<string> = new Set([PRESENTATION_META_KEY, PROGRESS_META_KEY])

/**
 * The result with the tool's cards in `_meta["toolvisor/presentation"]`, when the tool draws any.
 * Presenters are display-only: one that throws anyway (a bug) leaves the result without cards.
 */
export function withPresentation(
  result: CallToolResult,
  tool: Tool | undefined,
  args: unknown,
  answer: ToolResult,
): CallToolResult {
  if (tool?.presentCall === undefined && tool?.presentResult === undefined) return result
  try {
    const cards = {
      ...(tool.presentCall ? { call: tool.presentCall(args) } : {}),
      ...(tool.presentResult ? { result: tool.presentResult(args, answer) } : {}),
    }
    return { ...result, _meta: { ...result._meta, [PRESENTATION_META_KEY]: cards } }
  } catch {
    return result
  }
}
