import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
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
 * A registry result as an MCP `tools/call` result. `meta` stays on the host side; a
 * `structuredContent` that is not a JSON object (a jsonl oneshot's event array, a bare string) is
 * left out, because MCP requires an object there and the text content already carries it.
 */
export function toCallToolResult(result: ToolResult): CallToolResult {
  const content = result.content.map((item) => ({ type: 'text' as const, text: item.text }))
  if (isJsonObject(result.structuredContent)) {
    return { content, isError: result.isError, structuredContent: result.structuredContent }
  }
  return { content, isError: result.isError }
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
